// The kernel's share of waking parked long-polls (bench/waiters.py): COUNT loopback TCP
// connections, already accepted, each sent one BYTES-long answer by THREADS writer threads with
// one `write` apiece, and read by an epoll loop as bench/waiters-client.c reads them. No HTTP
// server, no parsing, no resume: what is left is what any server on this kernel pays to hand
// COUNT answers to COUNT sockets, and what the client pays to take them.
//
// Prints `kernel floor: threads T, answered N, p50 X ms, p99 Y ms, max Z ms`, each answer timed
// from the moment the first writer began (each writer stamps its own start: a stamp taken by the
// main thread once the barrier opens can come late, when the writers hold both cores).
//
// Build: cc -O2 -o waiters-kernel bench/waiters-kernel.c -lpthread
// Run:   waiters-kernel COUNT THREADS BYTES
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int count, threads;
static int *server_side, *client_side;
static char *answer;
static size_t answer_bytes;
static pthread_barrier_t start;
static double *began;

static double now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static void *write_share(void *argument) {
    long first = (long)argument;
    pthread_barrier_wait(&start);
    began[first] = now_ms();
    for (long i = first; i < count; i += threads) {
        if (write(server_side[i], answer, answer_bytes) != (ssize_t)answer_bytes) perror("write");
    }
    return NULL;
}

static int by_value(const void *left, const void *right) {
    double a = *(const double *)left, b = *(const double *)right;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s COUNT THREADS BYTES\n", argv[0]);
        return 2;
    }
    count = atoi(argv[1]), threads = atoi(argv[2]), answer_bytes = (size_t)atoi(argv[3]);
    server_side = calloc((size_t)count, sizeof *server_side);
    client_side = calloc((size_t)count, sizeof *client_side);
    double *arrived = calloc((size_t)count, sizeof *arrived);
    pthread_t *writers = calloc((size_t)threads, sizeof *writers);
    began = calloc((size_t)threads, sizeof *began);
    size_t *received = calloc((size_t)count, sizeof *received);
    answer = malloc(answer_bytes);
    if (!server_side || !client_side || !arrived || !writers || !began || !received || !answer || count < 1 ||
        threads < 1)
        return 1;
    memset(answer, 'x', answer_bytes);

    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = {.sin_family = AF_INET};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0 || listen(listener, 4096) != 0 ||
        getsockname(listener, (struct sockaddr *)&address, &length) != 0) {
        perror("listen");
        return 1;
    }
    int poll = epoll_create1(EPOLL_CLOEXEC), one = 1;
    for (int i = 0; i < count; i++) {
        client_side[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (connect(client_side[i], (struct sockaddr *)&address, sizeof address) != 0) {
            perror("connect");
            return 1;
        }
        server_side[i] = accept(listener, NULL, NULL);
        setsockopt(server_side[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(client_side[i], F_SETFL, O_NONBLOCK);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        epoll_ctl(poll, EPOLL_CTL_ADD, client_side[i], &event);
    }

    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (long t = 0; t < threads; t++) pthread_create(&writers[t], NULL, write_share, (void *)t);
    pthread_barrier_wait(&start);
    double deadline = now_ms() + 30000;
    int pending = count, answered = 0, failed = 0;
    struct epoll_event events[256];
    char buffer[8192];
    while (pending > 0 && now_ms() < deadline) {
        int ready = epoll_wait(poll, events, 256, 1000);
        for (int e = 0; e < ready; e++) {
            uint32_t i = events[e].data.u32;
            ssize_t got = read(client_side[i], buffer, sizeof buffer);
            if (got < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            if (got > 0) received[i] += (size_t)got;
            if (got > 0 && received[i] < answer_bytes) continue;
            // Complete, or closed or failed first (not an arrival).
            if (got > 0) arrived[answered++] = now_ms();
            else failed += 1;
            epoll_ctl(poll, EPOLL_CTL_DEL, client_side[i], NULL);
            pending -= 1;
        }
    }
    for (int t = 0; t < threads; t++) pthread_join(writers[t], NULL);
    if (answered == 0 || failed > 0 || pending > 0) {
        fprintf(stderr, "waiters-kernel: %d answered, %d failed, %d never arrived\n", answered, failed, pending);
        return 1;
    }
    double origin = began[0];
    for (int t = 1; t < threads; t++) origin = began[t] < origin ? began[t] : origin;
    for (int i = 0; i < answered; i++) arrived[i] -= origin;
    qsort(arrived, (size_t)answered, sizeof *arrived, by_value);
    int p50 = (int)(0.5 * (answered - 1) + 0.5), p99 = (int)(0.99 * (answered - 1) + 0.5);
    printf("kernel floor: threads %d, answered %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", threads, answered,
           arrived[p50], arrived[p99], arrived[answered - 1]);
    return 0;
}
