// The libmicrohttpd floor for a publish (bench/publish-latency.py): the least a server on
// libmicrohttpd 0.9.75 can do to answer `PUT` with a durable generation while keeping slow work
// off libmicrohttpd's threads, as feed-server must.
//
// The body is copied as it arrives; the connection is suspended and the write handed to a worker
// thread, which runs the bare flush-and-rename sequence (the one publish-latency.py times on its
// own) with the body as feed.json, then resumes the connection; libmicrohttpd's thread answers
// 201 with a small JSON body. No parsing, hashing, lint, journal or locking. `GET /healthz` is
// answered at once.
//
// Same daemon flags and limits as feed-server's HTTPDaemon (bench/floor-daemon.h).
//
// Its worker thread runs at normal priority, as feed-server's work pool does, and generations
// are numbered from 1 on every start: FOLDER must be new.
//
// With `inline` after FOLDER, the sequence runs on libmicrohttpd's thread instead, inside the
// handler: what the hand-off costs is the difference between the two (feed-server may not do
// this: its disk work would stall every connection of that thread).
//
// Build: cc -O2 -o publish-floor bench/publish-floor.c -lmicrohttpd -lpthread
// Run:   publish-floor PORT THREADS FOLDER [inline]
#include "floor-daemon.h"
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_BODY = 1 << 20 };

// One PUT: its body, and whether the worker has written it.
struct publish {
    struct MHD_Connection *connection;
    char *body;
    size_t length;
    int submitted;
    int written;  // guarded by `lock`
    int failed;
    struct publish *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct publish *queue_head, *queue_tail;
static const char *group;
static unsigned long sequence;
static int inline_writes;

static int write_durably(const char *path, const char *bytes, size_t length) {
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    int ok = write(fd, bytes, length) == (ssize_t)length && fsync(fd) == 0;
    close(fd);
    return ok ? 0 : -1;
}

static int sync_folder(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int result = fsync(fd);
    close(fd);
    return result;
}

// mkdir <n>.tmp; feed.json written and flushed; the folder flushed, renamed to <n>; generations/
// flushed; current.json.tmp written and flushed, renamed over current.json; the group flushed.
static int bare_sequence(const char *body, size_t length) {
    char generations[4096], temporary[4200], final[4200], file[4300], pointer[4200], pointer_tmp[4200];
    char pointer_body[128];
    unsigned long n = __atomic_add_fetch(&sequence, 1, __ATOMIC_RELAXED);
    snprintf(generations, sizeof generations, "%s/generations", group);
    snprintf(temporary, sizeof temporary, "%s/%lu.tmp", generations, n);
    snprintf(final, sizeof final, "%s/%lu", generations, n);
    snprintf(file, sizeof file, "%s/feed.json", temporary);
    snprintf(pointer, sizeof pointer, "%s/current.json", group);
    snprintf(pointer_tmp, sizeof pointer_tmp, "%s/current.json.tmp", group);
    int pointer_length = snprintf(pointer_body, sizeof pointer_body, "{\"current\":\"%lu\",\"previous\":[]}", n);
    if (mkdir(temporary, 0755) != 0) return -1;
    if (write_durably(file, body, length) != 0 || sync_folder(temporary) != 0) return -1;
    if (rename(temporary, final) != 0 || sync_folder(generations) != 0) return -1;
    if (write_durably(pointer_tmp, pointer_body, (size_t)pointer_length) != 0) return -1;
    if (rename(pointer_tmp, pointer) != 0 || sync_folder(group) != 0) return -1;
    return 0;
}

static void *worker(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (queue_head == NULL) pthread_cond_wait(&wake, &lock);
        struct publish *job = queue_head;
        queue_head = job->next;
        if (queue_head == NULL) queue_tail = NULL;
        pthread_mutex_unlock(&lock);
        int failed = bare_sequence(job->body, job->length) != 0;
        pthread_mutex_lock(&lock);
        job->failed = failed;
        job->written = 1;
        pthread_mutex_unlock(&lock);
        MHD_resume_connection(job->connection);
    }
    return NULL;
}

static enum MHD_Result answer_text(struct MHD_Connection *connection, unsigned int status, const char *text) {
    struct MHD_Response *response = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result publish(struct MHD_Connection *connection, const char *upload_data, size_t *upload_size,
                               void **state) {
    struct publish *job = *state;
    if (job == NULL) {  // First call: the head only.
        job = calloc(1, sizeof *job);
        if (job == NULL) return MHD_NO;
        job->connection = connection;
        *state = job;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        if (job->length + *upload_size > MAX_BODY) return MHD_NO;
        char *grown = realloc(job->body, job->length + *upload_size);
        if (grown == NULL) return MHD_NO;
        job->body = grown;
        memcpy(job->body + job->length, upload_data, *upload_size);
        job->length += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    if (!job->submitted && inline_writes) {  // The body is complete: written here, at once.
        job->submitted = 1;
        job->failed = bare_sequence(job->body, job->length) != 0;
    } else if (!job->submitted) {  // The body is complete: the worker writes it.
        job->submitted = 1;
        MHD_suspend_connection(connection);
        pthread_mutex_lock(&lock);
        if (queue_tail != NULL) queue_tail->next = job; else queue_head = job;
        queue_tail = job;
        pthread_mutex_unlock(&lock);
        pthread_cond_signal(&wake);  // after the unlock, as feed-server's pool does
        return MHD_YES;
    }
    pthread_mutex_lock(&lock);
    int failed = job->failed;
    pthread_mutex_unlock(&lock);
    free(job->body);
    free(job);
    *state = NULL;
    if (failed) return answer_text(connection, MHD_HTTP_INTERNAL_SERVER_ERROR, "{\"result\":\"failed\"}\n");
    return answer_text(connection, MHD_HTTP_CREATED, "{\"result\":\"published\"}\n");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_size, void **state) {
    (void)cls; (void)url; (void)version;
    if (strcmp(method, "PUT") == 0) return publish(connection, upload_data, upload_size, state);
    static int head_seen;
    if (*state == NULL) {
        *state = &head_seen;
        return MHD_YES;
    }
    return answer_text(connection, MHD_HTTP_OK, "{\"status\":\"ok\"}\n");
}

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "inline") == 0)) {
        fprintf(stderr, "usage: %s PORT THREADS FOLDER [inline]\n", argv[0]);
        return 2;
    }
    group = argv[3];
    inline_writes = argc == 5;
    char generations[4096];
    snprintf(generations, sizeof generations, "%s/generations", group);
    if ((mkdir(group, 0755) != 0 && errno != EEXIST) || (mkdir(generations, 0755) != 0 && errno != EEXIST)) {
        perror("mkdir");
        return 1;
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, worker, NULL) != 0) return 1;
    struct MHD_Daemon *daemon = start_floor_daemon(argv[1], argv[2], 30, 64, handle);
    printf("listening on 127.0.0.1:%s\n", argv[1]);
    fflush(stdout);
    wait_for_termination();
    MHD_stop_daemon(daemon);
    return 0;
}
