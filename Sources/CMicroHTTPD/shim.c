#include "CMicroHTTPD.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

// Keeps the URL as received: decoding happens once, per segment, in Swift.
static size_t keep_url_encoded(void *cls, struct MHD_Connection *connection, char *url) {
    (void)cls;
    (void)connection;
    return strlen(url);
}

// What a refused query's request slot holds until the access handler takes the slot over.
static const char query_refused_marker = 0;

bool CMicroHTTPD_query_refused(const void *request_slot) { return request_slot == &query_refused_marker; }

// libmicrohttpd 0.9.75 files each query argument as a record in the connection's memory pool while
// it parses the request line; when the pool runs out it can neither keep the argument nor build
// its own 431, and the connection hangs with nothing to send until a deadline closes it. Called
// just before that parse (MHD_OPTION_URI_LOG_CALLBACK), this counts the arguments and, past
// CMicroHTTPD_MAX_QUERY_ARGUMENTS or what the pool (`cls`, in bytes) holds beside the URL with
// room to spare, empties the query in place (the byte after '?' becomes NUL, so none is parsed:
// 0.9.75 itself writes NUL over the '?') and marks the request, which the transport refuses.
static void *limit_query_arguments(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)connection;
    const char *query = strchr(uri, '?');
    if (query == NULL) return NULL;
    size_t arguments = 1;
    const char *end = query + 1;
    for (; *end != '\0'; end++) arguments += *end == '&';
    size_t pool = (size_t)(uintptr_t)cls, needed = arguments * 64 + (size_t)(end - uri) + 2048;
    if (arguments <= CMicroHTTPD_MAX_QUERY_ARGUMENTS && needed <= pool) return NULL;
    ((char *)query)[1] = '\0';
    return (void *)&query_refused_marker;
}

size_t CMicroHTTPD_log_line(const char *message, char *line, size_t capacity) {
    static const char prefix[] = "feed-server: libmicrohttpd: ";
    static const char hex[] = "0123456789ABCDEF";
    size_t length = strlen(message);
    // libmicrohttpd ends its messages with a newline of its own; the line gets exactly one.
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) length--;
    if (capacity < sizeof prefix + 1) return 0;
    size_t used = sizeof prefix - 1;
    memcpy(line, prefix, used);
    for (size_t i = 0; i < length && used + 4 < capacity; i++) {
        unsigned char byte = (unsigned char)message[i];
        if (byte < 0x20 || byte >= 0x7F) {
            line[used++] = '%';
            line[used++] = hex[byte >> 4];
            line[used++] = hex[byte & 0x0F];
        } else {
            line[used++] = (char)byte;
        }
    }
    line[used++] = '\n';
    return used;
}

// libmicrohttpd's messages (MHD_USE_ERROR_LOG) as one escaped line each on stderr, written
// with one write(2) so they never interleave with the server's own lines. A bind failure is
// dropped: the server says itself, with the address, why it cannot listen.
static void log_message(void *cls, const char *format, va_list arguments) {
    (void)cls;
    static const char bind_failure[] = "Failed to bind to port";
    if (strncmp(format, bind_failure, sizeof bind_failure - 1) == 0) return;
    char message[1024];
    vsnprintf(message, sizeof message, format, arguments);
    char line[sizeof message * 3 + 64];
    size_t length = CMicroHTTPD_log_line(message, line, sizeof line);
    if (length > 0) (void)!write(STDERR_FILENO, line, length);
}

struct MHD_Daemon *CMicroHTTPD_start_daemon(const CMicroHTTPD_Settings *s,
                                            MHD_AccessHandlerCallback handler,
                                            MHD_RequestCompletedCallback completed,
                                            void *context) {
    struct MHD_OptionItem options[] = {
        {MHD_OPTION_SOCK_ADDR, 0, (void *)s->address},
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)s->thread_pool_size, NULL},
        {MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)s->connection_timeout_seconds, NULL},
        {MHD_OPTION_CONNECTION_LIMIT, (intptr_t)s->connection_limit, NULL},
        {MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)s->connection_memory_limit, NULL},
        {MHD_OPTION_LISTEN_BACKLOG_SIZE, (intptr_t)s->listen_backlog, NULL},
        {MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, context},
        {MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)keep_url_encoded, NULL},
        {MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)limit_query_arguments, (void *)(uintptr_t)s->connection_memory_limit},
        {MHD_OPTION_PER_IP_CONNECTION_LIMIT, (intptr_t)s->per_ip_connection_limit, NULL},
        // -1 is the only level at which 0.9.75 refuses whitespace between a header name and its
        // colon (400; RFC 9112 §5.1 requires it): otherwise `Content-Length : 5` is a header of
        // another name, and a proxy that reads it as the length frames the stream differently
        // (request smuggling). The checks that 1 adds (Host, spaces in the URL) are off at 0 and -1 alike.
        {MHD_OPTION_STRICT_FOR_CLIENT, -1, NULL},
        // Last, so a NULL callback ends the list early instead of registering nothing.
        {s->notify_connection ? MHD_OPTION_NOTIFY_CONNECTION : MHD_OPTION_END, (intptr_t)s->notify_connection, context},
        {MHD_OPTION_END, 0, NULL},
    };
    uint16_t port = 0;
    if (s->address->sa_family == AF_INET6) {
        port = ntohs(((const struct sockaddr_in6 *)s->address)->sin6_port);
    } else {
        port = ntohs(((const struct sockaddr_in *)s->address)->sin_port);
    }
    unsigned int flags = s->flags;
    if (s->address->sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    // The logger must be the very first option (an option array counts as one before its
    // items), or libmicrohttpd says so through its default logger.
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                            MHD_OPTION_EXTERNAL_LOGGER, log_message, NULL,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

int CMicroHTTPD_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

int CMicroHTTPD_set_cork(struct MHD_Connection *connection, int on) {
    int fd = CMicroHTTPD_connection_fd(connection);
    int value = on ? 1 : 0;
    return fd >= 0 && setsockopt(fd, IPPROTO_TCP, TCP_CORK, &value, sizeof value) == 0;
}

int CMicroHTTPD_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || size == 0) return 0;
    const struct sockaddr *address = info->client_addr;
    const void *bytes = NULL;
    if (address->sa_family == AF_INET) bytes = &((const struct sockaddr_in *)address)->sin_addr;
    else if (address->sa_family == AF_INET6) bytes = &((const struct sockaddr_in6 *)address)->sin6_addr;
    else return 0;
    return inet_ntop(address->sa_family, bytes, buffer, (socklen_t)size) != NULL;
}

const struct sockaddr *CMicroHTTPD_client_sockaddr(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}

void *CMicroHTTPD_connection_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

int CMicroHTTPD_listen_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info ? info->listen_fd : -1;
}

// The length of `value` without trailing spaces and tabs.
static size_t trimmed_length(const char *value) {
    size_t length = strlen(value);
    while (length > 0 && (value[length - 1] == ' ' || value[length - 1] == '\t')) length--;
    return length;
}

// Whether `value` is where libmicrohttpd 0.9.75 leaves the value of a field it read from one
// line: in place in the read buffer, after the name, the NUL that replaced the colon, and any
// spaces or tabs. A folded line (obs-fold, RFC 9112 §5.2) is appended to the *name*, which is
// moved for it, so its value is elsewhere: `Content: 36` CRLF ` -Length` becomes a field named
// `Content-Length` that a proxy which unfolds it reads as `Content: 36 -Length`, so the two frame
// the body differently. Every fold is refused, as §5.2 allows.
static int follows_its_name(const char *key, const char *value) {
    const char *after = key + strlen(key) + 1;
    while (after < value && (*after == ' ' || *after == '\t')) after++;
    return after == value;
}

// What one pass over the fields finds, beside the head handed back.
struct head_scan {
    CMicroHTTPD_RequestHead *head;
    int lengths;
    int folded;
    int different_lengths;
};

// Whether `key` starts with `name` (case-insensitively); sets `*longer` when more follows.
// A name that starts with a framing field's name and goes on is refused as a fold: libmicrohttpd
// 0.9.75 stores a folded framing field under a longer name, the field's own run together with
// more text (`Transfer-Encoding:` CRLF ` chunked` becomes `Transfer-Encodingchunked`), and not only
// when the first line is empty: `Content-Length: 35,` CRLF ` 35` loses its length too. A fold
// cannot be told from another field by its value (`Content-Length: 35,` CRLF ` 35` has a value a
// test on values lets through), so `Content-Length-Hint` and the like are refused with it; no
// registered field is named so.
static int names_field(const char *key, const char *name, size_t length, int *longer) {
    if (strncasecmp(key, name, length) != 0) return 0;
    *longer = key[length] != '\0';
    return 1;
}

static void scan_length(struct head_scan *scan, const char *value) {
    const char *given = value ? value : "";
    CMicroHTTPD_RequestHead *head = scan->head;
    if (scan->lengths++ == 0) {
        head->content_length = given;
    } else if (trimmed_length(given) != trimmed_length(head->content_length)
               || strncmp(given, head->content_length, trimmed_length(given)) != 0) {
        scan->different_lengths = 1;
    }
}

static enum MHD_Result scan_field(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
    struct head_scan *scan = cls;
    CMicroHTTPD_RequestHead *head = scan->head;
    if (kind == MHD_GET_ARGUMENT_KIND) {
        head->has_query = 1;
        return MHD_YES;
    }
    if (key == NULL) return MHD_YES;
    if (value != NULL && !follows_its_name(key, value)) scan->folded = 1;
    static const char length_name[] = "content-length", coding_name[] = "transfer-encoding";
    static const char match_name[] = "if-none-match", id_name[] = "x-request-id";
    static const char type_name[] = "content-type", expect_name[] = "expect", origin_name[] = "origin";
    int longer = 0;
    // The first letter picks the one name a field can be, so most fields cost one comparison.
    switch (key[0] | 0x20) {
    case 'c':
        if (names_field(key, length_name, sizeof length_name - 1, &longer)) {
            if (longer) scan->folded = 1; else scan_length(scan, value);
        } else if (head->content_type == NULL && strcasecmp(key, type_name) == 0) {
            head->content_type = value ? value : "";
        }
        break;
    case 'e':
        if (head->expect == NULL && strcasecmp(key, expect_name) == 0) head->expect = value ? value : "";
        break;
    case 't':
        if (names_field(key, coding_name, sizeof coding_name - 1, &longer)) {
            if (longer) {
                scan->folded = 1;
                break;
            }
            head->transfer_encodings++;
            if (head->transfer_encoding == NULL) head->transfer_encoding = value ? value : "";
        }
        break;
    case 'i':
        if (head->if_none_match == NULL && strcasecmp(key, match_name) == 0) head->if_none_match = value ? value : "";
        break;
    case 'o':
        if (head->origin == NULL && strcasecmp(key, origin_name) == 0) head->origin = value ? value : "";
        break;
    case 'x':
        if (head->request_id == NULL && strcasecmp(key, id_name) == 0) head->request_id = value ? value : "";
        break;
    default:
        break;
    }
    return MHD_YES;
}

void CMicroHTTPD_read_head(struct MHD_Connection *connection, CMicroHTTPD_RequestHead *head) {
    memset(head, 0, sizeof *head);
    struct head_scan scan = {.head = head};
    MHD_get_connection_values(connection, MHD_HEADER_KIND | MHD_GET_ARGUMENT_KIND, scan_field, &scan);
    if (scan.folded) head->framing = CMicroHTTPD_FRAMING_FOLDED;
    else if (scan.different_lengths) head->framing = CMicroHTTPD_FRAMING_DIFFERENT_LENGTHS;
    else if (scan.lengths > 0 && head->transfer_encodings > 0) head->framing = CMicroHTTPD_FRAMING_LENGTH_AND_CODING;
    else head->framing = CMicroHTTPD_FRAMING_CLEAR;
}
