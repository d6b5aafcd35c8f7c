/*
 * The floor of a Secret Service provider split as swift-keychain's is (DESIGN.md: a bridge on the
 * session bus, the keys in keychaind): a responder that answers every call secret-service-cpu.py
 * and secret-tool make with constants, through libdbus as the bridge does, and asks a second
 * process once, over a Unix socket, for each call a keychain must answer (SearchItems, GetSecret,
 * GetSecrets). Like the bridge, it asks the bus who a sender is the first time it calls
 * (GetConnectionCredentials), since the keychain answers each app as itself.
 *
 * It does less than any real provider of that design: no store (the second process answers at
 * once, with ids of 16 bytes and a constant secret), no encryption (it refuses DH sessions, so
 * clients fall back to plain ones), no per-client connection to the second process. Its CPU per
 * call is what the process split and the bus library cost on this machine before any work.
 *
 *   cc -O2 -o secret-service-floor Benchmarks/secret-service-floor.c $(pkg-config --cflags --libs dbus-1)
 *   secret-service-floor ITEMS   (on DBUS_SESSION_BUS_ADDRESS; a search for all returns ITEMS paths)
 */
#include <dbus/dbus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ROOT "/org/freedesktop/secrets"
#define COLLECTION ROOT "/collection/login"
#define SESSION ROOT "/session/s1"
#define SECRET "correct-horse-battery-staple"
#define ID_BYTES 16
#define KNOWN_SENDERS 64

static int keeper;          /* the responder's end of the socket to the second process */
static uint32_t all_items;  /* how many paths a search for all returns */
static uint8_t ids[ID_BYTES * 100000];
static char known[KNOWN_SENDERS][64];
static unsigned next_known;

static void exchange_bytes(int socket, void *bytes, size_t count, int writing) {
    for (size_t done = 0; done < count;) {
        ssize_t moved = writing ? write(socket, (char *)bytes + done, count - done)
                                : read(socket, (char *)bytes + done, count - done);
        if (moved <= 0) exit(1);
        done += (size_t)moved;
    }
}

/* The second process: reads a count, answers that many ids (each a different one). */
static void keep(int socket) {
    for (uint32_t i = 0; i < sizeof(ids); i++) ids[i] = (uint8_t)(i * 31 + 7);
    for (uint32_t item = 0; item < sizeof(ids) / ID_BYTES; item++) memcpy(ids + item * ID_BYTES, &item, sizeof(item));
    for (;;) {
        uint32_t count;
        ssize_t got = read(socket, &count, sizeof(count));
        if (got != sizeof(count) || count > sizeof(ids) / ID_BYTES) exit(0);
        exchange_bytes(socket, ids, (size_t)count * ID_BYTES, 1);
    }
}

/* One round trip to the second process: `count` ids into `into`. */
static void ask_keeper(uint32_t count, uint8_t *into) {
    exchange_bytes(keeper, &count, sizeof(count), 1);
    exchange_bytes(keeper, into, (size_t)count * ID_BYTES, 0);
}

static void item_path(const uint8_t *id, char path[128]) {
    int at = snprintf(path, 128, "%s/", COLLECTION);
    for (int i = 0; i < ID_BYTES; i++) at += snprintf(path + at, 128 - at, "%02x", id[i]);
}

static void append_paths(DBusMessageIter *into, uint32_t count) {
    static uint8_t answered[sizeof(ids)];
    ask_keeper(count, answered);
    DBusMessageIter array;
    dbus_message_iter_open_container(into, DBUS_TYPE_ARRAY, "o", &array);
    for (uint32_t i = 0; i < count; i++) {
        char path[128];
        const char *text = path;
        item_path(answered + (size_t)i * ID_BYTES, path);
        dbus_message_iter_append_basic(&array, DBUS_TYPE_OBJECT_PATH, &text);
    }
    dbus_message_iter_close_container(into, &array);
}

/* A secret of the plain session: (session, parameters, value, content type). */
static void append_secret(DBusMessageIter *into) {
    DBusMessageIter secret, bytes;
    const char *session = SESSION, *type = "text/plain";
    const unsigned char *value = (const unsigned char *)SECRET;
    dbus_message_iter_open_container(into, DBUS_TYPE_STRUCT, NULL, &secret);
    dbus_message_iter_append_basic(&secret, DBUS_TYPE_OBJECT_PATH, &session);
    dbus_message_iter_open_container(&secret, DBUS_TYPE_ARRAY, "y", &bytes);
    dbus_message_iter_close_container(&secret, &bytes);
    dbus_message_iter_open_container(&secret, DBUS_TYPE_ARRAY, "y", &bytes);
    dbus_message_iter_append_fixed_array(&bytes, DBUS_TYPE_BYTE, &value, (int)strlen(SECRET));
    dbus_message_iter_close_container(&secret, &bytes);
    dbus_message_iter_append_basic(&secret, DBUS_TYPE_STRING, &type);
    dbus_message_iter_close_container(into, &secret);
}

static void append_variant(DBusMessageIter *into, const char *property) {
    DBusMessageIter variant;
    if (strcmp(property, "Collections") == 0) {
        DBusMessageIter array;
        const char *path = COLLECTION;
        dbus_message_iter_open_container(into, DBUS_TYPE_VARIANT, "ao", &variant);
        dbus_message_iter_open_container(&variant, DBUS_TYPE_ARRAY, "o", &array);
        dbus_message_iter_append_basic(&array, DBUS_TYPE_OBJECT_PATH, &path);
        dbus_message_iter_close_container(&variant, &array);
    } else if (strcmp(property, "Locked") == 0) {
        dbus_bool_t no = FALSE;
        dbus_message_iter_open_container(into, DBUS_TYPE_VARIANT, "b", &variant);
        dbus_message_iter_append_basic(&variant, DBUS_TYPE_BOOLEAN, &no);
    } else {
        const char *label = "bench";
        dbus_message_iter_open_container(into, DBUS_TYPE_VARIANT, "s", &variant);
        dbus_message_iter_append_basic(&variant, DBUS_TYPE_STRING, &label);
    }
    dbus_message_iter_close_container(into, &variant);
}

/* True when `sender` called before; otherwise asks the bus who it is, as the bridge does. */
static void identify(DBusConnection *bus, const char *sender) {
    for (unsigned i = 0; i < KNOWN_SENDERS; i++)
        if (strcmp(known[i], sender) == 0) return;
    DBusMessage *call = dbus_message_new_method_call(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionCredentials");
    dbus_message_append_args(call, DBUS_TYPE_STRING, &sender, DBUS_TYPE_INVALID);
    DBusMessage *reply = dbus_connection_send_with_reply_and_block(bus, call, 5000, NULL);
    dbus_message_unref(call);
    if (reply) dbus_message_unref(reply);
    snprintf(known[next_known++ % KNOWN_SENDERS], sizeof(known[0]), "%s", sender);
}

/* Whether a SearchItems asks for all the search items (bench=search and no n). */
static int asks_for_all(DBusMessage *call) {
    DBusMessageIter arguments, array, entry;
    int bench = 0, n = 0;
    if (!dbus_message_iter_init(call, &arguments)) return 0;
    dbus_message_iter_recurse(&arguments, &array);
    while (dbus_message_iter_get_arg_type(&array) == DBUS_TYPE_DICT_ENTRY) {
        const char *key, *value;
        dbus_message_iter_recurse(&array, &entry);
        dbus_message_iter_get_basic(&entry, &key);
        dbus_message_iter_next(&entry);
        dbus_message_iter_get_basic(&entry, &value);
        if (strcmp(key, "bench") == 0 && strcmp(value, "search") == 0) bench = 1;
        if (strcmp(key, "n") == 0) n = 1;
        dbus_message_iter_next(&array);
    }
    return bench && !n;
}

/* The arguments a method the floor answers takes ("" for none it reads). */
static const char *signature_of(const char *member) {
    static const char *const methods[][2] = {
        {"OpenSession", "sv"}, {"SearchItems", "a{ss}"}, {"GetSecret", "o"}, {"GetSecrets", "aoo"},
        {"CreateItem", "a{sv}(oayays)b"}, {"Get", "ss"}, {"GetAll", "s"},
    };
    for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (strcmp(member, methods[i][0]) == 0) return methods[i][1];
    return "";
}

static DBusMessage *answer(DBusConnection *bus, DBusMessage *call) {
    const char *member = dbus_message_get_member(call), *path = dbus_message_get_path(call);
    const char *interface = dbus_message_get_interface(call);
    if (!member || !path || !interface || !dbus_message_get_sender(call)) return NULL;
    if (strcmp(member, "Ping") == 0) return dbus_message_new_method_return(call);
    const char *signature = signature_of(member);
    if (*signature && !dbus_message_has_signature(call, signature))
        return dbus_message_new_error(call, DBUS_ERROR_INVALID_ARGS, signature);
    identify(bus, dbus_message_get_sender(call));
    DBusMessage *reply = dbus_message_new_method_return(call);
    DBusMessageIter out;
    dbus_message_iter_init_append(reply, &out);
    if (strcmp(interface, "org.freedesktop.DBus.Properties") == 0 && strcmp(member, "Get") == 0) {
        const char *owner, *property;
        if (!dbus_message_get_args(call, NULL, DBUS_TYPE_STRING, &owner, DBUS_TYPE_STRING, &property,
                                   DBUS_TYPE_INVALID))
            goto unknown;
        append_variant(&out, property);
    } else if (strcmp(interface, "org.freedesktop.DBus.Properties") == 0 && strcmp(member, "GetAll") == 0) {
        DBusMessageIter array, entry;
        const char *name = "Collections";
        dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "{sv}", &array);
        dbus_message_iter_open_container(&array, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
        dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &name);
        append_variant(&entry, name);
        dbus_message_iter_close_container(&array, &entry);
        dbus_message_iter_close_container(&out, &array);
    } else if (strcmp(member, "OpenSession") == 0) {
        const char *algorithm;
        DBusMessageIter arguments;
        dbus_message_iter_init(call, &arguments);
        dbus_message_iter_get_basic(&arguments, &algorithm);
        if (strcmp(algorithm, "plain") != 0) {
            dbus_message_unref(reply);
            return dbus_message_new_error(call, DBUS_ERROR_NOT_SUPPORTED, "plain sessions only");
        }
        DBusMessageIter variant;
        const char *empty = "", *session = SESSION;
        dbus_message_iter_open_container(&out, DBUS_TYPE_VARIANT, "s", &variant);
        dbus_message_iter_append_basic(&variant, DBUS_TYPE_STRING, &empty);
        dbus_message_iter_close_container(&out, &variant);
        dbus_message_iter_append_basic(&out, DBUS_TYPE_OBJECT_PATH, &session);
    } else if (strcmp(member, "CreateItem") == 0) {
        static unsigned created;
        char item[128];
        const char *text = item, *none = "/";
        snprintf(item, sizeof(item), "%s/created%u", COLLECTION, created++);
        dbus_message_iter_append_basic(&out, DBUS_TYPE_OBJECT_PATH, &text);
        dbus_message_iter_append_basic(&out, DBUS_TYPE_OBJECT_PATH, &none);
    } else if (strcmp(member, "SearchItems") == 0) {
        append_paths(&out, asks_for_all(call) ? all_items : 1);
        if (strcmp(path, ROOT) == 0) append_paths(&out, 0); /* the service's: unlocked, locked */
    } else if (strcmp(member, "GetSecret") == 0) {
        uint8_t id[ID_BYTES];
        ask_keeper(1, id);
        append_secret(&out);
    } else if (strcmp(member, "GetSecrets") == 0) {
        DBusMessageIter arguments, items, array, entry;
        static uint8_t answered[sizeof(ids)];
        uint32_t count = 0;
        dbus_message_iter_init(call, &arguments);
        count = (uint32_t)dbus_message_iter_get_element_count(&arguments);
        if (count > sizeof(ids) / ID_BYTES) goto unknown;
        ask_keeper(count, answered);
        dbus_message_iter_recurse(&arguments, &items);
        dbus_message_iter_open_container(&out, DBUS_TYPE_ARRAY, "{o(oayays)}", &array);
        while (dbus_message_iter_get_arg_type(&items) == DBUS_TYPE_OBJECT_PATH) {
            const char *item;
            dbus_message_iter_get_basic(&items, &item);
            dbus_message_iter_open_container(&array, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
            dbus_message_iter_append_basic(&entry, DBUS_TYPE_OBJECT_PATH, &item);
            append_secret(&entry);
            dbus_message_iter_close_container(&array, &entry);
            dbus_message_iter_next(&items);
        }
        dbus_message_iter_close_container(&out, &array);
    } else if (strcmp(member, "Close") == 0) {
    } else {
        goto unknown;
    }
    return reply;
unknown:
    dbus_message_unref(reply);
    return dbus_message_new_error(call, DBUS_ERROR_UNKNOWN_METHOD, member);
}

int main(int argc, char **argv) {
    all_items = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 10000;
    if (all_items > sizeof(ids) / ID_BYTES) return 2;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
        close(pair[0]);
        keep(pair[1]);
    }
    close(pair[1]);
    keeper = pair[0];
    printf("%d\n", (int)child);
    fflush(stdout);
    DBusConnection *bus = dbus_bus_get_private(DBUS_BUS_SESSION, NULL);
    if (!bus) return 1;
    dbus_connection_set_exit_on_disconnect(bus, FALSE);
    if (dbus_bus_request_name(bus, "org.freedesktop.secrets", DBUS_NAME_FLAG_DO_NOT_QUEUE, NULL)
        != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER)
        return 1;
    while (dbus_connection_read_write(bus, -1)) {
        DBusMessage *call;
        while ((call = dbus_connection_pop_message(bus))) {
            if (dbus_message_get_type(call) == DBUS_MESSAGE_TYPE_METHOD_CALL) {
                DBusMessage *reply = answer(bus, call);
                if (reply && !dbus_message_get_no_reply(call)) dbus_connection_send(bus, reply, NULL);
                if (reply) dbus_message_unref(reply);
            }
            dbus_message_unref(call);
        }
    }
    return 0;
}
