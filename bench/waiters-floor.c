// The libmicrohttpd floor for parked long-polls (bench/waiters.py): the least work any server on
// libmicrohttpd 0.9.75 can do to park requests and answer them all when a publish arrives.
//
// A GET that sends the current ETag in If-None-Match is suspended and listed; a PUT makes a new
// ETag, resumes every listed connection and answers 201; a resumed GET gets the new body from one
// prepared response. No disk, no parsing, no deadlines. `GET /metrics` says how many are parked,
// in feed-server's words, so the same client drives both.
//
// Same daemon flags and limits as feed-server's HTTPDaemon (bench/floor-daemon.h).
//
// Build: cc -O2 -o waiters-floor bench/waiters-floor.c -lmicrohttpd -lpthread
// Run:   waiters-floor PORT THREADS MAX_CONNECTIONS
#include "floor-daemon.h"
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct MHD_Connection **parked;
static size_t parked_count;
static size_t capacity;
static int version = 1;
static struct MHD_Response *current;

// A 200 for `version`, with its ETag; the caller holds `lock`.
static struct MHD_Response *prepare(int for_version) {
    char body[64], tag[32];
    int length = snprintf(body, sizeof body, "{\"v\":%d}", for_version);
    snprintf(tag, sizeof tag, "\"v%d\"", for_version);
    struct MHD_Response *response = MHD_create_response_from_buffer((size_t)length, body, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(response, MHD_HTTP_HEADER_ETAG, tag);
    MHD_add_response_header(response, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return response;
}

static enum MHD_Result answer_text(struct MHD_Connection *connection, unsigned int status, const char *text) {
    struct MHD_Response *response = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result result = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return result;
}

static enum MHD_Result publish(struct MHD_Connection *connection) {
    pthread_mutex_lock(&lock);
    version += 1;
    MHD_destroy_response(current);
    current = prepare(version);
    for (size_t i = 0; i < parked_count; i++) MHD_resume_connection(parked[i]);
    parked_count = 0;
    pthread_mutex_unlock(&lock);
    return answer_text(connection, MHD_HTTP_CREATED, "{}");
}

static enum MHD_Result park_or_answer(struct MHD_Connection *connection, void **state) {
    static int resumed;
    const char *sent = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH);
    pthread_mutex_lock(&lock);
    char tag[32];
    snprintf(tag, sizeof tag, "\"v%d\"", version);
    if (*state != &resumed && sent != NULL && strcmp(sent, tag) == 0 && parked_count < capacity) {
        parked[parked_count++] = connection;
        *state = &resumed;
        MHD_suspend_connection(connection);
        pthread_mutex_unlock(&lock);
        return MHD_YES;
    }
    enum MHD_Result result = MHD_queue_response(connection, MHD_HTTP_OK, current);
    pthread_mutex_unlock(&lock);
    return result;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version_text, const char *upload_data, size_t *upload_size, void **state) {
    (void)cls; (void)version_text; (void)upload_data;
    static int head_seen;
    if (*state == NULL) {  // First call: the head only; answer on the next one.
        *state = &head_seen;
        return MHD_YES;
    }
    if (*upload_size != 0) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (strcmp(method, "PUT") == 0) return publish(connection);
    if (strcmp(url, "/metrics") == 0) {
        char text[64];
        pthread_mutex_lock(&lock);
        snprintf(text, sizeof text, "feedserver_open_waiters %zu\n", parked_count);
        pthread_mutex_unlock(&lock);
        return answer_text(connection, MHD_HTTP_OK, text);
    }
    return park_or_answer(connection, state);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s PORT THREADS MAX_CONNECTIONS\n", argv[0]);
        return 2;
    }
    capacity = (size_t)atoi(argv[3]);
    parked = calloc(capacity, sizeof *parked);
    if (parked == NULL) return 1;
    current = prepare(version);
    struct MHD_Daemon *daemon = start_floor_daemon(argv[1], argv[2], 120, (unsigned int)capacity, handle);
    wait_for_termination();
    // Parked connections must be resumed before the daemon stops (libmicrohttpd aborts otherwise).
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < parked_count; i++) MHD_resume_connection(parked[i]);
    parked_count = 0;
    pthread_mutex_unlock(&lock);
    MHD_stop_daemon(daemon);
    MHD_destroy_response(current);
    free(parked);
    return 0;
}
