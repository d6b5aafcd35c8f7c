# Where a Secret Service call's time goes: for each measure of Benchmarks/secret-service.py, the
# median wall time, and the CPU time per call of the client (this process, and for secret-tool its
# child), of the bus daemon and of the provider (utime + stime from /proc/PID/stat, summed over
# every call and divided by their number). The client's and the bus's CPU is spent on the call's
# path whatever the provider does: their sum is a floor no provider can go under, which tells
# whether a target ratio against another provider can be met at all.
#
# Several providers are measured in one run, each on a bus of its own, taking turns: every measure
# runs in ROUNDS blocks per provider, one provider's block after the other's, so that a change in
# the machine's speed (this one's drifts by a fifth within minutes) falls on all of them alike.
#   python3 Benchmarks/secret-service-cpu.py ITEMS ROUNDS PROVIDER…
# PROVIDER: NAME|COLLECTION|BUS_ADDRESS|PROVIDER_PIDS|BUS_PID, PROVIDER_PIDS comma-separated
# (gnome-keyring-daemon; or keychain-secret-service,keychaind). Each provider holds an item stored
# by `secret-tool store service bench account account-1`.
import os, statistics, subprocess, sys, time
from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection
from jeepney.wrappers import unwrap_msg
import secretstorage
from secretstorage.util import open_session

search_items, rounds = int(sys.argv[1]), int(sys.argv[2])
ticks = os.sysconf("SC_CLK_TCK")

def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks

class Provider:
    def __init__(self, spec):
        self.name, self.collection_name, self.address, pids, bus = spec.split("|")
        self.pids = [int(pid) for pid in pids.split(",")]
        self.bus = int(bus)
        self.connection = open_dbus_connection(bus=self.address)
        self.session = open_session(self.connection)
        self.service = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                                   interface="org.freedesktop.Secret.Service")
        self.peer = DBusAddress("/org/freedesktop/secrets", bus_name="org.freedesktop.secrets",
                                interface="org.freedesktop.DBus.Peer")
        self.default = secretstorage.get_default_collection(self.connection, self.session)
        self.environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=self.address)

    def snapshot(self):
        own = os.times()
        return (sum(cpu_seconds(pid) for pid in self.pids), cpu_seconds(self.bus), own.user + own.system,
                own.children_user + own.children_system)

    def call(self, address, member, signature=None, body=()):
        return unwrap_msg(self.connection.send_and_get_reply(new_method_call(address, member, signature, body),
                                                             timeout=120))

providers = [Provider(spec) for spec in sys.argv[3:]]

def measure(label, repeat, body):
    for provider in providers:
        for _ in range(max(3, repeat // 10)):
            body(provider)
    block = max(1, repeat // rounds)
    samples = {provider.name: [] for provider in providers}
    spent = {provider.name: [0.0, 0.0, 0.0, 0.0] for provider in providers}
    for _ in range(rounds):
        for provider in providers:
            before = provider.snapshot()
            for _ in range(block):
                start = time.perf_counter_ns()
                body(provider)
                samples[provider.name].append((time.perf_counter_ns() - start) / 1e6)
            after = provider.snapshot()
            spent[provider.name] = [total + b - a for total, a, b in zip(spent[provider.name], before, after)]
    for provider in providers:
        calls = len(samples[provider.name])
        provider_cpu, bus_cpu, client, child = (seconds * 1000 / calls for seconds in spent[provider.name])
        print(f"{provider.name:9} {label:14} median {statistics.median(samples[provider.name]):8.3f} ms  CPU per "
              f"call: provider {provider_cpu:7.3f}  bus {bus_cpu:6.3f}  client {client + child:7.3f} ms", flush=True)

for provider in providers:
    provider.default.create_item("bench", {"service": "bench-py", "account": "account-1"},
                                 b"correct-horse-battery-staple")

def lookup(provider):
    item = next(provider.default.search_items({"service": "bench-py", "account": "account-1"}))
    item.get_secret()

measure("ping", 2000, lambda provider: provider.call(provider.peer, "Ping"))
measure("lookup", 2000, lookup)
measure("secret-tool", 300, lambda provider: subprocess.run(
    ["secret-tool", "lookup", "service", "bench", "account", "account-1"], stdout=subprocess.DEVNULL, check=True,
    env=provider.environment))
for provider in providers:
    provider.paths = [provider.default.create_item(f"many {i}", {"bench": "many", "n": str(i)},
                                                   b"secret-%d" % i).item_path for i in range(700)]
measure("getsecrets700", 48, lambda provider: provider.call(
    provider.service, "GetSecrets", "aoo", (provider.paths, provider.session.object_path)))
for provider in providers:
    target = secretstorage.Collection(provider.connection,
                                      f"/org/freedesktop/secrets/collection/{provider.collection_name}",
                                      provider.session)
    for i in range(search_items):
        target.create_item(f"search {i}", {"bench": "search", "n": str(i)}, b"s")
# The one item sought is one of two in turn: the keychain's bridge answers a search asked again with
# nothing changed from memory (a search of a few items), and this row measures the search.
turn = iter(range(1 << 30))
measure("search-one", 200, lambda provider: provider.call(
    provider.service, "SearchItems", "a{ss}", ({"bench": "search", "n": str(search_items // 2 + next(turn) % 2)},)))
measure("search-all", 20, lambda provider: provider.call(
    provider.service, "SearchItems", "a{ss}", ({"bench": "search"},)))
