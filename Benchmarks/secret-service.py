# Secret Service timings for Benchmarks/compare.sh: one provider, on the session bus in
# DBUS_SESSION_BUS_ADDRESS. Writes one hyperfine-shaped JSON file per measure into RESULTS, named
# PREFIX-MEASURE.1.json, each with every sample in seconds.
#   python3 Benchmarks/secret-service.py RESULTS PREFIX COLLECTION SEARCH_ITEMS
import json, sys, time
from jeepney import DBusAddress, new_method_call
from jeepney.wrappers import unwrap_msg
import secretstorage
from secretstorage.util import open_session

results, prefix, collection_name, search_items = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
connection = secretstorage.dbus_init()
session = open_session(connection)
service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                      interface="org.freedesktop.Secret.Service")

def call(member, signature, body):
    return unwrap_msg(connection.send_and_get_reply(new_method_call(service, member, signature, body)))

def save(measure, samples):
    with open(f"{results}/{prefix}-{measure}.1.json", "w") as file:
        json.dump({"results": [{"times": samples}]}, file)

def timed(repeat, body, warmup=10):
    for _ in range(warmup):
        body()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter_ns()
        body()
        samples.append((time.perf_counter_ns() - start) / 1e9)
    return samples

default = secretstorage.get_default_collection(connection, session)
default.create_item("bench", {"service": "bench-py", "account": "account-1"}, b"correct-horse-battery-staple")

# A lookup as a long-running client makes it: search, then the secret, on one session.
def lookup():
    item = next(default.search_items({"service": "bench-py", "account": "account-1"}))
    item.get_secret()
save("lookup", timed(2000, lookup))

# 700 items in the default collection, fetched in one GetSecrets.
paths = [default.create_item(f"many {i}", {"bench": "many", "n": str(i)}, b"secret-%d" % i).item_path
         for i in range(700)]
save("getsecrets700", timed(50, lambda: call("GetSecrets", "aoo", (paths, session.object_path)), warmup=3))

# SEARCH_ITEMS items in COLLECTION, searched for one of them and for all of them.
target = secretstorage.Collection(connection, f"/org/freedesktop/secrets/collection/{collection_name}", session)
for i in range(search_items):
    target.create_item(f"search {i}", {"bench": "search", "n": str(i)}, b"s")
# The one item sought is one of two in turn: the keychain's bridge answers a search asked again with
# nothing changed from memory (a search of a few items), and this row measures the search.
turn = iter(range(1 << 30))
save("search-one", timed(200, lambda: call("SearchItems", "a{ss}", (
    {"bench": "search", "n": str(search_items // 2 + next(turn) % 2)},))))
save("search-all", timed(20, lambda: call("SearchItems", "a{ss}", ({"bench": "search"},)), warmup=2))
