// The node arena's all-reduce at np 2 in C, to measure what the protocol allows without a JVM (docs/PERFORMANCE.md,
// "The node arena's protocol in C"): the same copies, reductions and per-piece flags as hccl-java's
// ArenaAlgorithm (ordinary buffers: own slice copied to the output, the other half posted to the arena, the peer's
// half reduced from its slot, the reduced slice posted, the peer's reduced slice copied out; registered: no posting,
// the peer's input and output read where they are), double-buffered as the arena's halves. Two processes on one
// shared mapping; waits spin, then yield. INPLACE=1 makes each rank's output its input (as an in-place all-reduce).
// Build and run: gcc -O3 -march=native -o /tmp/arena-allreduce tools/arena-allreduce.c
//                /tmp/arena-allreduce BYTES ITERS WARMUP REGISTERED(0|1) PIECE_BYTES   (PIN=1 pins the two processes)
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct { _Atomic long posted, reduced; char pad[112]; } flags_t;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void await(_Atomic long *f, long v) { int spins = 0; while (atomic_load_explicit(f, memory_order_acquire) < v) { if (++spins > 100) sched_yield(); } }
static void reduce(float *restrict dst, const float *restrict src, size_t n) { for (size_t i = 0; i < n; i++) dst[i] += src[i]; }

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? strtoul(argv[1], 0, 0) : 2 << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 200, warm = argc > 3 ? atoi(argv[3]) : 50;
    int registered = argc > 4 ? atoi(argv[4]) : 0;
    size_t piece = argc > 5 ? strtoul(argv[5], 0, 0) : 256 << 10;
    if (piece > bytes) piece = bytes;
    // shared: flags[2], slots[2][piece] (arena), in[2][bytes], out[2][bytes] (peers' buffers, registered mode)
    size_t total = 4096 + 4 * piece + 4 * bytes;
    char *shm = mmap(0, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(shm, 0, total);
    flags_t *flags = (flags_t *)shm;
    char *slots[2][2] = { { shm + 4096, shm + 4096 + piece }, { shm + 4096 + 2 * piece, shm + 4096 + 3 * piece } };
    char *in[2] = { shm + 4096 + 4 * piece, shm + 4096 + 4 * piece + bytes };
    char *out[2] = { in[1] + bytes, in[1] + 2 * bytes };
    int inPlace = getenv("INPLACE") != 0;
    if (inPlace) { out[0] = in[0]; out[1] = in[1]; }
    int me = fork() == 0 ? 1 : 0, peer = 1 - me;
    if (getenv("PIN")) { cpu_set_t set; CPU_ZERO(&set); CPU_SET(me, &set); sched_setaffinity(0, sizeof set, &set); }
    for (size_t i = 0; i < bytes / 4; i++) ((float *)in[me])[i] = (float)(i % 7 + me);
    long step = 0; double start = 0;
    for (int it = 0; it < warm + iters; it++)
    {
        if (it == warm) { step++; atomic_store(&flags[me].posted, step); await(&flags[peer].posted, step); start = now(); }
        for (size_t at = 0; at < bytes; at += piece)
        {
            size_t len = bytes - at < piece ? bytes - at : piece, half = len / 2;
            size_t from = me * half, to = me ? len : half;          // this rank's slice of the piece
            size_t pfrom = peer * half, pto = peer ? len : half;     // the peer's slice
            step++;
            char **slot = slots[step & 1];   // double buffering: a piece's slots are reused two pieces later
            const char *peerIn;
            if (!registered) { memcpy(slot[me] + pfrom, in[me] + at + pfrom, pto - pfrom); }
            atomic_store_explicit(&flags[me].posted, step, memory_order_release);
            await(&flags[peer].posted, step);
            peerIn = registered ? in[peer] + at : slot[peer];
            if (!inPlace) memcpy(out[me] + at + from, in[me] + at + from, to - from);
            reduce((float *)(out[me] + at + from), (const float *)(peerIn + from), (to - from) / 4);
            if (!registered) memcpy(slot[me] + from, out[me] + at + from, to - from);
            atomic_store_explicit(&flags[me].reduced, step, memory_order_release);
            await(&flags[peer].reduced, step);
            const char *peerOut = registered ? out[peer] + at : slot[peer];
            memcpy(out[me] + at + pfrom, peerOut + pfrom, pto - pfrom);
        }
    }
    double t = (now() - start) / iters;
    if (me == 0) { wait(0); printf("%zu B registered=%d in-place=%d piece=%zu: %.1f us, busbw %.2f GB/s\n", bytes, registered, inPlace, piece, t * 1e6, bytes / t / 1e9); }
    float expect = (float)(5 % 7) * 2 + 1; if (!inPlace && ((float *)out[me])[5] != expect) printf("rank %d wrong: %f\n", me, ((float *)out[me])[5]);
    return 0;
}
