// Boost.Context reference for perf/ctxswitch: N fibers on one core, each
// incrementing its own value in a large array and handing control straight
// to the next fiber (a symmetric ring, one context switch per hand-off,
// like Grapevine's worker-to-worker yield). Boost has no scheduler and no
// prefetching; this is the cost of its jump_fcontext plus the loop.
// SPDX-License-Identifier: BSD-3-Clause
//
// usage: ctxswitch_boost [-s SWITCHES] [N ...]
// prints: ctxswitch impl=boost workers=N prefetch=off ns=X
#include <boost/context/fiber.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ctx = boost::context;

static const std::size_t STRIDE = 8; // one cache line per fiber

static std::vector<ctx::fiber> slots; // [i]: fiber i suspended; [n]: main
static std::uint64_t          *array;
static std::uint64_t           n_fibers, iters;

static std::size_t prev_of(std::size_t i, std::uint64_t round)
{
    if (i == 0)
        return (round == 0) ? n_fibers : n_fibers - 1;
    return i - 1;
}

static ctx::fiber make_fiber(std::size_t i)
{
    return ctx::fiber(std::allocator_arg, ctx::fixedsize_stack(64 * 1024),
                      [i](ctx::fiber &&caller) {
                          std::uint64_t *slot = &array[i * STRIDE];
                          slots[prev_of(i, 0)] = std::move(caller);
                          for (std::uint64_t r = 0; r < iters; r++) {
                              ++*slot;
                              std::size_t next =
                                  (i + 1 == n_fibers) ? 0 : i + 1;
                              if ((next == 0) && (r + 1 == iters))
                                  break; // the last one goes back to main
                              ctx::fiber c = std::move(slots[next]).resume();
                              slots[prev_of(i, r + 1)] = std::move(c);
                          }
                          std::size_t next = (i + 1 == n_fibers) ? n_fibers
                                                                 : i + 1;
                          return std::move(slots[next]);
                      });
}

static double run(std::uint64_t n, std::uint64_t it)
{
    n_fibers = n;
    iters    = it;
    std::memset(array, 0, n * STRIDE * sizeof(std::uint64_t));
    slots.clear();
    slots.resize(n + 1);
    for (std::size_t i = 0; i < n; i++)
        slots[i] = make_fiber(i);
    auto t0 = std::chrono::steady_clock::now();
    ctx::fiber back = std::move(slots[0]).resume();
    auto t1 = std::chrono::steady_clock::now();
    (void)back;
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; i++)
        sum += array[i * STRIDE];
    if (sum != n * it) {
        std::fprintf(stderr, "ctxswitch_boost: %llu increments, expected %llu\n",
                     (unsigned long long)sum, (unsigned long long)(n * it));
        std::exit(1);
    }
    slots.clear();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    return ns / double(n * it);
}

int main(int argc, char **argv)
{
    std::uint64_t              target = 20000000;
    std::vector<std::uint64_t> ns;
    int                        a = 1, reps = 3;

    while ((a + 1 < argc) && (std::strcmp(argv[a], "-s") == 0 ||
                              std::strcmp(argv[a], "-r") == 0)) {
        if (argv[a][1] == 's')
            target = std::strtoull(argv[a + 1], nullptr, 10);
        else
            reps = std::atoi(argv[a + 1]);
        a += 2;
    }
    if ((reps < 1) || (reps > 99)) {
        std::fprintf(stderr, "ctxswitch_boost: -r takes 1..99\n");
        return 2;
    }
    for (; a < argc; a++)
        ns.push_back(std::strtoull(argv[a], nullptr, 10));
    if (ns.empty())
        ns = {2, 1000, 100000, 500000};
    std::uint64_t max_n = 0;
    for (auto n : ns)
        max_n = (n > max_n) ? n : max_n;
    array = static_cast<std::uint64_t *>(
        std::calloc(max_n * STRIDE, sizeof(std::uint64_t)));
    for (auto n : ns) {
        if (n < 1)
            continue;
        std::uint64_t it = target / n;
        if (it < 20)
            it = 20;
        std::vector<double> t;
        for (int r = 0; r < reps; r++)
            t.push_back(run(n, it));
        std::sort(t.begin(), t.end());
        std::printf("ctxswitch impl=boost workers=%llu prefetch=off ns=%.1f\n",
                    (unsigned long long)n, t[t.size() / 2]);
        std::fflush(stdout);
    }
    std::free(array);
    return 0;
}
