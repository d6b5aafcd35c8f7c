#!/usr/bin/env bash
# swift-keychain against the secret stores Linux users have, measured in one run on this machine.
#
#   Benchmarks/compare.sh            # installs the peers (Debian, PyPI), builds in release, runs
#   RUNS=200 Benchmarks/compare.sh   # more runs per whole-process command (default 100)
#
# Whole processes are timed with hyperfine: a secret looked up from a shell as `git` or a script
# would. The commands take turns in ROUNDS rounds (default 4) of RUNS/ROUNDS runs each, after a
# warm-up, and each median is that of all its runs: the machine's speed drifts by a fifth within
# minutes, and a command timed in one block would carry whatever drift fell on it. By
#   - keychainctl find-generic-password -w, through the user's keychaind (started and warm),
#     and in embedded mode (KEYCHAIN_MODE=embedded: the keychain opened in the process)
#   - secret-tool lookup, on gnome-keyring over D-Bus (unlocked with gnome-keyring-daemon --unlock)
#   - pass show, with a passphrase-less gpg key and a warm gpg-agent
#   - python3 -c 'keyring.get_password(...)', Python keyring on the same Secret Service
#   - keyctl pipe, the kernel keyring: the floor, no store at all.
#   - Benchmarks/start-floor.swift, a Swift program built as keychainctl is that writes one line:
#     the floor of any Swift command that links Foundation (its runtime's start, Foundation's).
# The Secret Service, the same clients against gnome-keyring and against keychain-secret-service
# (each provider on a session bus of its own): secret-tool lookup, whole process; and in one
# Python process (secretstorage over jeepney, one connection, one encrypted session) a lookup,
# SearchItems among SECRET_SERVICE_ITEMS items (default 10,000) for one of them and for all of
# them, and one GetSecrets of 700 items (Firefox's old keyring extension fetched every item at
# each tab switch). gnome-keyring's SECRET_SERVICE_ITEMS items are in its session collection:
# adding them to its login keyring rewrites the file at each item (36 ms an item at 1,000 items,
# an hour for 10,000), and it searches in memory either way. Its 700 are in the login keyring.
# Lookups inside one process: swift-keychain's read in process and through keychaind (from the
# benchmark suite, `swift package benchmark`), against Python secretstorage doing lookups over
# one D-Bus connection and one session.
#
# Everything runs under its own HOME, XDG folders and D-Bus session in a temporary folder, removed
# at the end; the user's own keychain, keyrings and gpg are not touched. Needs root for apt-get
# (or the packages already installed). Prints one table: operation, swift-keychain's median, each
# peer's median, and the ratio of the peer to swift-keychain (above 1: swift-keychain is faster).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-100}
ROUNDS=${ROUNDS:-4}
SECRET_SERVICE_ITEMS=${SECRET_SERVICE_ITEMS:-10000}

if [[ -z "${COMPARE_INSIDE_SESSION:-}" ]]; then
    need=()
    for tool in hyperfine:hyperfine secret-tool:libsecret-tools gnome-keyring-daemon:gnome-keyring pass:pass keyctl:keyutils gpg:gpg dbus-run-session:dbus; do
        command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
    done
    if ((${#need[@]})); then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
    fi
    python3 -c 'import keyring, secretstorage' 2>/dev/null || python3 -m pip install -q keyring secretstorage
    # Built as the Debian package builds them (debian/rules: static Swift runtime, no $ORIGIN run
    # path), apart from the suite's build.
    for product in keychainctl keychaind keychain-secret-service; do
        swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path .build-static \
            --product "$product" >&2
    done
    # keychainctl's linker flags (Package.swift), its folder of linker scripts among them: the
    # static Swift runtime needs libstdc++, which keychainctl takes from its static archive and
    # so must the floor (the shared one costs a fifth of the floor's start to load and bind).
    swiftc -O -static-stdlib -use-ld=lld -L Linking/static-archives -Xclang-linker -static-libgcc \
        -Xlinker --no-export-dynamic -Xlinker -z -Xlinker pack-relative-relocs Benchmarks/start-floor.swift \
        -o .build-static/start-floor >&2
    swift package --disable-sandbox benchmark --filter '^read · (embedded|daemon) · 1k$' --time-units microseconds --no-progress >"${TMPDIR:-/tmp}/compare-suite.$$" 2>&1 \
        || { cat "${TMPDIR:-/tmp}/compare-suite.$$" >&2; exit 1; }
    export COMPARE_SUITE_OUTPUT="${TMPDIR:-/tmp}/compare-suite.$$"
    scratch=$(mktemp -d)
    trap 'rm -rf "$scratch" "$COMPARE_SUITE_OUTPUT"' EXIT
    mkdir -m 700 "$scratch/home" "$scratch/run"
    # A session bus of our own: gnome-keyring, secret-tool and the Python clients meet on it,
    # and it ends (with gnome-keyring) when the script inside ends.
    env -i PATH="$PATH" HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/run" XDG_DATA_HOME="$scratch/home/.local/share" \
        XDG_CONFIG_HOME="$scratch/home/.config" LANG=C.UTF-8 RUNS="$RUNS" ROUNDS="$ROUNDS" COMPARE_INSIDE_SESSION=1 \
        SECRET_SERVICE_ITEMS="$SECRET_SERVICE_ITEMS" \
        COMPARE_SUITE_OUTPUT="$COMPARE_SUITE_OUTPUT" PYTHONPATH="${PYTHONPATH:-}" \
        dbus-run-session -- "$0"
    exit
fi

# Inside the private session.
results="$HOME/results"
mkdir -p "$results"
keychainctl="$PWD/.build-static/release/keychainctl"
secret="correct-horse-battery-staple"

# gnome-keyring: a login keyring created and unlocked with a password, as a desktop login does.
eval "$(printf 'bench-login' | gnome-keyring-daemon --unlock --components=secrets)"
eval "$(gnome-keyring-daemon --start --components=secrets)"
export GNOME_KEYRING_CONTROL
printf '%s' "$secret" | secret-tool store --label='bench' service bench account account-1

# pass: a gpg key without a passphrase, the agent warmed by one decryption.
gpg --batch --quiet --passphrase '' --quick-gen-key 'bench <bench@example.invalid>' default default never 2>/dev/null
pass init 'bench@example.invalid' >/dev/null
printf '%s\n' "$secret" | pass insert -e bench/account-1 >/dev/null
pass show bench/account-1 >/dev/null

# The kernel keyring: a user key in the user's keyring (removed at the end).
key=$(keyctl add user bench-account-1 "$secret" @u)
trap 'keyctl unlink "$key" @u >/dev/null 2>&1 || true' EXIT

# swift-keychain: the user's keychaind, started by the first command; and the embedded keychain.
printf '%s' "$secret" | "$keychainctl" add-generic-password -s bench -a account-1 >/dev/null
printf '%s' "$secret" | KEYCHAIN_MODE=embedded "$keychainctl" add-generic-password -s bench -a account-1 >/dev/null

# The keychain's Secret Service, on a session bus of its own (gnome-keyring has this one's).
gnome_bus=$DBUS_SESSION_BUS_ADDRESS
keychain_bus=$(dbus-daemon --session --fork --print-address=1 --print-pid=3 3>"$HOME/keychain-bus.pid" | head -1)
trap 'keyctl unlink "$key" @u >/dev/null 2>&1 || true; kill "$(cat "$HOME/keychain-bus.pid")" 2>/dev/null || true' EXIT
DBUS_SESSION_BUS_ADDRESS=$keychain_bus "$PWD/.build-static/release/keychain-secret-service" &
for _ in $(seq 100); do
    DBUS_SESSION_BUS_ADDRESS=$keychain_bus dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetNameOwner string:org.freedesktop.secrets >/dev/null 2>&1 && break
    sleep 0.1
done
printf '%s' "$secret" | DBUS_SESSION_BUS_ADDRESS=$keychain_bus secret-tool store --label='bench' service bench account account-1

time_command() { # name round command…
    local name=$1 round=$2
    shift 2
    hyperfine --style none --warmup 10 --runs $(((RUNS + ROUNDS - 1) / ROUNDS)) -N --export-json "$results/$name.$round.json" -- "$*" >/dev/null 2>"$results/$name.err" \
        || { echo "compare.sh: timing '$*' failed:" >&2; cat "$results/$name.err" >&2; exit 1; }
}
for ((round = 1; round <= ROUNDS; round++)); do
    time_command keychainctl "$round" "$keychainctl find-generic-password -s bench -a account-1 -w"
    KEYCHAIN_MODE=embedded time_command keychainctl-embedded "$round" "$keychainctl find-generic-password -s bench -a account-1 -w"
    time_command secret-tool "$round" "secret-tool lookup service bench account account-1"
    time_command pass "$round" "pass show bench/account-1"
    time_command python-keyring "$round" "python3 -c 'import keyring; keyring.get_password(\"bench\", \"account-1\")'"
    time_command keyctl "$round" "keyctl pipe $key"
    time_command start-floor "$round" "$PWD/.build-static/start-floor"
    time_command secret-tool-gnome "$round" "env DBUS_SESSION_BUS_ADDRESS=$gnome_bus secret-tool lookup service bench account account-1"
    time_command secret-tool-keychain "$round" "env DBUS_SESSION_BUS_ADDRESS=$keychain_bus secret-tool lookup service bench account account-1"
done

# The Secret Service in one process, against each provider (Benchmarks/secret-service.py).
DBUS_SESSION_BUS_ADDRESS=$gnome_bus python3 Benchmarks/secret-service.py "$results" gnome session "$SECRET_SERVICE_ITEMS"
DBUS_SESSION_BUS_ADDRESS=$keychain_bus python3 Benchmarks/secret-service.py "$results" keychain login "$SECRET_SERVICE_ITEMS"
"$keychainctl" daemon stop >/dev/null

# Python secretstorage: lookups in one process, one connection, one session (as a long-running
# client does), the median of 2,000 (written as one round, in hyperfine's form).
python3 - "$results/secretstorage.1.json" <<'PYTHON'
import json, sys, time
import secretstorage
from secretstorage.util import open_session
connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection, open_session(connection))
samples = []
for _ in range(2200):
    start = time.perf_counter_ns()
    item = next(collection.search_items({"service": "bench", "account": "account-1"}))
    item.get_secret()
    samples.append((time.perf_counter_ns() - start) / 1e9)
json.dump({"results": [{"times": samples[200:]}]}, open(sys.argv[1], "w"))
PYTHON

python3 - "$results" "$COMPARE_SUITE_OUTPUT" "$SECRET_SERVICE_ITEMS" <<'PYTHON'
import glob, json, re, statistics, sys
results, suite = sys.argv[1], sys.argv[2]

def median(name):
    """The median of every run of `name` in every round, in seconds."""
    times = [time for path in glob.glob(f"{results}/{name}.*.json") for time in json.load(open(path))["results"][0]["times"]]
    return statistics.median(times)

def suite_median(benchmark):
    """The p50 of a benchmark's wall clock in the suite's text output, in seconds."""
    text = open(suite).read()
    section = text.split(benchmark, 1)[1]
    for line in section.splitlines():
        if line.startswith("│ Time (wall clock)") or line.startswith("| Time (wall clock)"):
            cells = [cell.strip() for cell in re.split(r"[│|]", line) if cell.strip()]
            return float(cells[3]) / 1e6  # p0, p25, p50: µs
    raise SystemExit(f"no wall clock for {benchmark} in the suite's output")

def show(seconds):
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.1f} µs"

rows = [
    ("lookup, whole process (keychainctl find-generic-password -w, via keychaind)", median("keychainctl"),
     [("secret-tool lookup", median("secret-tool")), ("pass show", median("pass")),
      ("Python keyring", median("python-keyring")), ("keyctl pipe (floor)", median("keyctl")),
      ("a Swift program built as keychainctl is that writes one line (floor)", median("start-floor"))]),
    ("lookup, whole process, embedded (KEYCHAIN_MODE=embedded)", median("keychainctl-embedded"),
     [("secret-tool lookup", median("secret-tool"))]),
    ("lookup in one process, through keychaind", suite_median("read · daemon · 1k"),
     [("Python secretstorage, one session", median("secretstorage"))]),
    ("lookup in one process, embedded", suite_median("read · embedded · 1k"),
     [("Python secretstorage, one session", median("secretstorage"))]),
]
items = int(sys.argv[3])
for operation, ours, theirs in [
    ("Secret Service: secret-tool lookup, whole process", "secret-tool-keychain", "secret-tool-gnome"),
    ("Secret Service: lookup in one process (secretstorage, one session)", "keychain-lookup", "gnome-lookup"),
    (f"Secret Service: SearchItems for 1 of {items:,} items", "keychain-search-one", "gnome-search-one"),
    (f"Secret Service: SearchItems matching all {items:,} items", "keychain-search-all", "gnome-search-all"),
    ("Secret Service: GetSecrets of 700 items, one call", "keychain-getsecrets700", "gnome-getsecrets700"),
]:
    rows.append((operation, median(ours), [("gnome-keyring", median(theirs))]))
print("| operation | swift-keychain (median) | peer | peer's median | peer / swift-keychain |")
print("|---|---|---|---|---|")
for operation, ours, peers in rows:
    for peer, theirs in peers:
        print(f"| {operation} | {show(ours)} | {peer} | {show(theirs)} | {theirs / ours:.2f}× |")
PYTHON
