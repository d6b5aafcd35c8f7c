# Where a Secret Service call's time goes: for each measure of Benchmarks/secret-service.py, the
# median wall time, and the CPU time per call of the client (this process, and for secret-tool its
# child), of the bus daemon and of the provider (utime + stime from /proc/PID/stat, summed over
# every call and divided by their number). The client's and the bus's CPU is spent on the call's
# path whatever the provider does: their sum is a floor no provider can go under, which tells
# whether a target ratio against another provider can be met at all.
#   DBUS_SESSION_BUS_ADDRESS=… python3 Benchmarks/secret-service-cpu.py NAME COLLECTION ITEMS \
#       PROVIDER_PIDS BUS_PID
# PROVIDER_PIDS: comma-separated (gnome-keyring-daemon; or keychain-secret-service,keychaind). The
# provider holds an item stored by `secret-tool store service bench account account-1`.
import os, statistics, subprocess, sys, time
from jeepney import DBusAddress, new_method_call
from jeepney.wrappers import unwrap_msg
import secretstorage
from secretstorage.util import open_session

name, collection_name, search_items = sys.argv[1], sys.argv[2], int(sys.argv[3])
providers = [int(pid) for pid in sys.argv[4].split(",")]
bus = int(sys.argv[5])
ticks = os.sysconf("SC_CLK_TCK")

def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks

def snapshot():
    own = os.times()
    return (sum(cpu_seconds(pid) for pid in providers), cpu_seconds(bus), own.user + own.system,
            own.children_user + own.children_system)

connection = secretstorage.dbus_init()
session = open_session(connection)
service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                      interface="org.freedesktop.Secret.Service")
peer = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                   interface="org.freedesktop.DBus.Peer")

def call(address, member, signature=None, body=()):
    return unwrap_msg(connection.send_and_get_reply(new_method_call(address, member, signature, body), timeout=120))

def measure(label, repeat, body):
    for _ in range(max(3, repeat // 10)):
        body()
    samples = []
    before = snapshot()
    for _ in range(repeat):
        start = time.perf_counter_ns()
        body()
        samples.append((time.perf_counter_ns() - start) / 1e6)
    after = snapshot()
    provider, bus_cpu, client, child = ((b - a) * 1000 / repeat for a, b in zip(before, after))
    print(f"{name:9} {label:14} median {statistics.median(samples):8.3f} ms  CPU per call: provider {provider:7.3f}"
          f"  bus {bus_cpu:6.3f}  client {client + child:7.3f} ms", flush=True)

default = secretstorage.get_default_collection(connection, session)
default.create_item("bench", {"service": "bench-py", "account": "account-1"}, b"correct-horse-battery-staple")

def lookup():
    item = next(default.search_items({"service": "bench-py", "account": "account-1"}))
    item.get_secret()

measure("ping", 2000, lambda: call(peer, "Ping"))
measure("lookup", 2000, lookup)
measure("secret-tool", 300, lambda: subprocess.run(
    ["secret-tool", "lookup", "service", "bench", "account", "account-1"], stdout=subprocess.DEVNULL, check=True))
paths = [default.create_item(f"many {i}", {"bench": "many", "n": str(i)}, b"secret-%d" % i).item_path
         for i in range(700)]
measure("getsecrets700", 50, lambda: call(service, "GetSecrets", "aoo", (paths, session.object_path)))
target = secretstorage.Collection(connection, f"/org/freedesktop/secrets/collection/{collection_name}", session)
for i in range(search_items):
    target.create_item(f"search {i}", {"bench": "search", "n": str(i)}, b"s")
measure("search-one", 200, lambda: call(service, "SearchItems", "a{ss}", ({"bench": "search", "n": str(search_items // 2)},)))
measure("search-all", 20, lambda: call(service, "SearchItems", "a{ss}", ({"bench": "search"},)))
