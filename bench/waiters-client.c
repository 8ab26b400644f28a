// The timing side of bench/waiters.py: COUNT long-poll GETs parked on one feed, then the publish
// that wakes them, with every answer timed from the moment the publish was sent.
//
// Python drives the servers and reads /metrics and /proc, but reading 1,000 answers through a
// Python selector loop costs ~20 µs each: the slowest waiter's figure was mostly the client's own
// time. This client reads them with epoll and stamps each answer with CLOCK_MONOTONIC on arrival.
//
// Protocol on stdin/stdout: the client connects and sends the COUNT GETs (`If-None-Match: ETAG`),
// prints `parked-sent`, and waits for a line on stdin (the caller has seen the server park them);
// then it sends `PUT PATH` with BODY and prints `publish MS STATUS`, then `waiter MS STATUS` for
// each answered GET (`waiter - -1` for one whose connection failed or closed first, or that never
// came), then `done`. An answer counts when its head (through the blank line) has arrived. Gives
// up 30 s after the publish.
//
// Build: cc -O2 -o waiters-client bench/waiters-client.c
// Run:   waiters-client PORT COUNT ETAG PATH BODY
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { head_capacity = 4096 };

struct answer {
    int fd;
    size_t length;
    double at_ms;
    int status;
    char head[head_capacity];
};

static double now_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static int connect_to(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static void send_all(int fd, const char *text, size_t length) {
    while (length > 0) {
        ssize_t sent = send(fd, text, length, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR) continue;
        if (sent <= 0) {
            perror("send");
            exit(1);
        }
        text += sent;
        length -= (size_t)sent;
    }
}

// Reads what `fd` has; returns 1 once the head is complete (status parsed, time stamped), -1 when
// the peer closed or failed first, 0 to wait for more.
static int read_head(struct answer *answer) {
    for (;;) {
        size_t room = head_capacity - 1 - answer->length;
        if (room == 0) return -1;
        ssize_t got = recv(answer->fd, answer->head + answer->length, room, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (got <= 0) return -1;
        answer->length += (size_t)got;
        answer->head[answer->length] = 0;
        if (strstr(answer->head, "\r\n\r\n") != NULL) {
            answer->at_ms = now_ms();
            answer->status = atoi(answer->head + 9);  // "HTTP/1.1 " is nine bytes
            return 1;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s PORT COUNT ETAG PATH BODY\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]), count = atoi(argv[2]);
    const char *etag = argv[3], *path = argv[4], *body = argv[5];
    struct answer *answers = calloc((size_t)count + 1, sizeof *answers);
    int poll = epoll_create1(EPOLL_CLOEXEC);
    if (answers == NULL || poll < 0) return 1;
    char request[1024];
    for (int i = 0; i < count; i++) {
        answers[i].fd = connect_to(port);
        int length = snprintf(request, sizeof request, "GET %s?wait=60 HTTP/1.1\r\nHost: x\r\nIf-None-Match: %s\r\n\r\n",
                              path, etag);
        send_all(answers[i].fd, request, (size_t)length);
    }
    printf("parked-sent\n");
    fflush(stdout);
    char line[64];
    if (fgets(line, sizeof line, stdin) == NULL) return 1;

    struct answer *publisher = &answers[count];
    publisher->fd = connect_to(port);
    int length = snprintf(request, sizeof request,
                          "PUT %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                          path, strlen(body), body);
    // Every socket is registered before the publish goes out, so no answer waits on the set-up.
    for (int i = 0; i <= count; i++) {
        fcntl(answers[i].fd, F_SETFL, fcntl(answers[i].fd, F_GETFL) | O_NONBLOCK);
        struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (epoll_ctl(poll, EPOLL_CTL_ADD, answers[i].fd, &event) != 0) return 1;
    }
    double published = now_ms();
    send_all(publisher->fd, request, (size_t)length);

    int pending = count + 1;
    struct epoll_event events[256];
    while (pending > 0 && now_ms() - published < 30000) {
        int ready = epoll_wait(poll, events, 256, 1000);
        for (int e = 0; e < ready; e++) {
            struct answer *answer = &answers[events[e].data.u32];
            int state = read_head(answer);
            if (state == 0) continue;
            epoll_ctl(poll, EPOLL_CTL_DEL, answer->fd, NULL);
            pending -= 1;
            if (state < 0) answer->status = -1;
        }
    }
    // Reported after the loop, so printing costs no answer its time.
    printf("publish %.3f %d\n", publisher->at_ms > 0 ? publisher->at_ms - published : -1.0, publisher->status);
    for (int i = 0; i < count; i++) {
        if (answers[i].at_ms > 0) printf("waiter %.3f %d\n", answers[i].at_ms - published, answers[i].status);
        else printf("waiter - -1\n");
    }
    printf("done\n");
    return 0;
}
