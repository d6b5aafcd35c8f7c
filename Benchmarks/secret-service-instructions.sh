#!/usr/bin/env bash
# The Secret Service bridge's instructions and first-level instruction-cache misses per call,
# counted by callgrind, beside the floor's (Benchmarks/secret-service-floor.c's responder, which
# the bridge's work is set against):
#   Benchmarks/secret-service-instructions.sh [BUILD_DIR]
# BUILD_DIR holds the release keychain-secret-service and keychaind (default .build/release).
# Two measures, each run twice with a different count so that start-up cancels out:
#   lookup       secretstorage's lookup in one session (SearchItems, Label, Locked, GetSecret),
#   secret-tool  `secret-tool lookup`, a new client each time (its session's Diffie-Hellman too).
# Instruction counts repeat exactly from run to run, where this machine's times do not. The
# misses are callgrind's simulation of a cache of this processor's sizes (`--cache-sim=yes`), the
# process alone on it: what a call's code spreads over, which the count of instructions does not
# show, and which is fetched again after each wake-up (Benchmarks/README.md, "Against the peers").
#
# keychaind trusts the bridge by the path of its executable, and under valgrind a program's
# executable is valgrind's tool: the tool is copied beside keychaind under the bridge's name,
# and the bridge runs inside it. keychaind itself (native here) is not counted: valgrind 3.19
# stops in the signal thread of an `async` main. Needs valgrind, dbus, libsecret-tools,
# python3-secretstorage (Debian's python3), a C compiler and libdbus-1-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-.build/release}")
tool=$(dirname "$(command -v valgrind)")/../libexec/valgrind/callgrind-amd64-linux
[[ -x $tool ]] || tool=$(find /usr/libexec/valgrind /usr/lib/*/valgrind -name callgrind-amd64-linux 2>/dev/null | head -1)
[[ -x $tool ]] || { echo "secret-service-instructions.sh: no callgrind-amd64-linux found" >&2; exit 1; }
scratch=$(mktemp -d)
started=()
trap 'for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done; sleep 0.5; rm -rf "$scratch"' EXIT
# Every process started here (the buses, the providers, keychaind) is ended by its pid.

mkdir -m 700 "$scratch/home" "$scratch/run" "$scratch/bin"
export HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/run" XDG_DATA_HOME="$scratch/home/.local/share" \
    XDG_CONFIG_HOME="$scratch/home/.config" KEYCHAIN_PINENTRY=none SWIFT_DETERMINISTIC_HASHING=1
cp "$build/keychaind" "$scratch/bin/keychaind"
cp "$tool" "$scratch/bin/keychain-secret-service"
# valgrind 3.19 cannot read this toolchain's DWARF; the symbol table is enough for callgrind.
cp "$build/keychain-secret-service" "$scratch/bin/bridge"
strip --strip-debug "$scratch/bin/bridge"
cc -O2 -o "$scratch/bin/floor" Benchmarks/secret-service-floor.c $(pkg-config --cflags --libs dbus-1)
"$scratch/bin/keychaind" --idle-lock 0 >"$scratch/keychaind.log" 2>&1 &
started+=("$!")
for _ in $(seq 100); do [[ -S $XDG_RUNTIME_DIR/keychain/socket ]] && break; sleep 0.1; done

cat >"$scratch/lookups.py" <<'PY'
import sys
import secretstorage
from secretstorage.util import open_session
connection = secretstorage.dbus_init()
collection = secretstorage.get_default_collection(connection, open_session(connection))
collection.create_item("bench", {"service": "bench-py", "account": "account-1"}, b"correct-horse-battery-staple",
                       replace=True)
for _ in range(int(sys.argv[1])):
    next(collection.search_items({"service": "bench-py", "account": "account-1"})).get_secret()
PY

# The instructions of one provider's run, in $scratch/count: `measure PROVIDER MEASURE COUNT`
# (PROVIDER: bridge or floor).
measure() {
    local provider=$1 what=$2 count=$3 out="$scratch/$1-$2-$3" pid bus
    export DBUS_SESSION_BUS_ADDRESS=$(dbus-daemon --session --fork --print-address=1 --print-pid=3 \
        3>"$scratch/bus.pid" | head -1)
    bus=$(cat "$scratch/bus.pid")
    started+=("$bus")
    if [[ $provider == bridge ]]; then
        VALGRIND_LAUNCHER=$(command -v valgrind) VALGRIND_LIB=$(dirname "$tool") \
            "$scratch/bin/keychain-secret-service" --tool=callgrind --cache-sim=yes \
            --callgrind-out-file="$out.%p" "$scratch/bin/bridge" 2>"$out.log" &
        pid=$!
    else
        valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file="$out.%p" "$scratch/bin/floor" \
            10000 >"$scratch/keeper.pid" 2>"$out.log" &
        pid=$!
    fi
    started+=("$pid")
    for _ in $(seq 300); do
        dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.GetNameOwner string:org.freedesktop.secrets >/dev/null 2>&1 && break
        sleep 0.1
    done
    if [[ $what == lookup ]]; then
        /usr/bin/python3 "$scratch/lookups.py" "$count"
    else
        [[ $provider == bridge ]] && printf 'correct-horse-battery-staple' |
            secret-tool store --label=bench service bench account account-1
        for _ in $(seq "$count"); do secret-tool lookup service bench account account-1 >/dev/null; done
    fi
    kill "$pid"
    wait "$pid" || true
    [[ $provider == floor ]] && kill "$(cat "$scratch/keeper.pid")"
    kill "$bus"
    # The summary's events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw.
    awk '/^summary:/ { print $2, $5 }' "$out.$pid" >"$scratch/count"
}

printf '%-12s %-10s %12s %12s %7s %14s %14s %7s\n' measure calls 'bridge' 'floor' ratio \
    'bridge I1 miss' 'floor I1 miss' ratio
for what in lookup secret-tool; do
    if [[ $what == lookup ]]; then few=100 many=400; else few=20 many=80; fi
    instructions=()
    misses=()
    for provider in bridge floor; do
        measure "$provider" "$what" "$few"
        read -r low_instructions low_misses <"$scratch/count"
        measure "$provider" "$what" "$many"
        read -r high_instructions high_misses <"$scratch/count"
        instructions+=($(((high_instructions - low_instructions) / (many - few))))
        misses+=($(((high_misses - low_misses) / (many - few))))
    done
    printf '%-12s %-10s %12s %12s %6.2fx %14s %14s %6.2fx\n' "$what" "$few, $many" \
        "${instructions[0]}" "${instructions[1]}" "$(echo "${instructions[0]} / ${instructions[1]}" | bc -l)" \
        "${misses[0]}" "${misses[1]}" "$(echo "${misses[0]} / ${misses[1]}" | bc -l)"
done
