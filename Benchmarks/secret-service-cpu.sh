#!/usr/bin/env bash
# Benchmarks/secret-service-cpu.py against gnome-keyring, keychain-secret-service and the floor,
# in one run, each provider on a session bus of its own under a scratch HOME (removed at the
# end), all running while the measures take turns between them:
#   Benchmarks/secret-service-cpu.sh [BUILD_DIR] [ITEMS]
# BUILD_DIR holds the release keychain-secret-service, keychaind and keychainctl (default
# .build/release); ITEMS the items SearchItems looks among (default 10,000; gnome-keyring's in
# its session collection, as compare.sh explains). ROUNDS (default 4) is how many blocks each
# measure takes turns in. PROVIDERS names the providers measured (default "gnome keychain floor"):
# gnome-keyring's CreateItem grows with the items it holds (52 ms an item at about 50,000), so
# filling it with 100,000 takes well over an hour. `floor` is Benchmarks/secret-service-floor.c,
# what the bridge's split into two processes costs before any work. Needs gnome-keyring,
# libsecret-tools, dbus, python3-secretstorage (Debian's python3, which has it), a C compiler
# and libdbus-1-dev.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-.build/release}")
items=${2:-10000}
providers=${PROVIDERS:-gnome keychain floor}
rounds=${ROUNDS:-4}
scratch=$(mktemp -d)
started=()
measured=()
trap 'for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done; sleep 0.5; rm -rf "$scratch"' EXIT
# Every process started here (the buses, the providers, keychaind) is ended by its pid.

# A session bus of its own: its address and its pid in $address and $bus.
new_bus() {
    address=$(dbus-daemon --session --fork --print-address=1 --print-pid=3 3>"$scratch/bus.pid" | head -1)
    bus=$(cat "$scratch/bus.pid")
    started+=("$bus")
}
wait_for_name() {
    for _ in $(seq 100); do
        dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.GetNameOwner string:org.freedesktop.secrets >/dev/null 2>&1 && return
        sleep 0.1
    done
    echo "secret-service-cpu.sh: no provider took org.freedesktop.secrets" >&2
    exit 1
}
# The pid of the process that owns org.freedesktop.secrets.
provider_pid() {
    dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '/uint32/ { print $2 }'
}

mkdir -m 700 "$scratch/home" "$scratch/run"
export HOME="$scratch/home" XDG_RUNTIME_DIR="$scratch/run" XDG_DATA_HOME="$scratch/home/.local/share" \
    XDG_CONFIG_HOME="$scratch/home/.config" KEYCHAIN_PINENTRY=none

# gnome-keyring: a login keyring created and unlocked with a password, as a desktop login does.
if [[ " $providers " == *" gnome "* ]]; then
    new_bus
    export DBUS_SESSION_BUS_ADDRESS=$address
    eval "$(printf 'bench-login' | gnome-keyring-daemon --unlock --components=secrets)"
    eval "$(gnome-keyring-daemon --start --components=secrets)"
    wait_for_name
    gnome=$(provider_pid)
    started+=("$gnome")
    printf 'correct-horse-battery-staple' | secret-tool store --label=bench service bench account account-1
    measured+=("gnome|session|$address|$gnome|$bus")
fi

# swift-keychain: the bridge, which starts keychaind from beside it.
if [[ " $providers " == *" keychain "* ]]; then
    new_bus
    export DBUS_SESSION_BUS_ADDRESS=$address
    "$build/keychain-secret-service" &
    bridge=$!
    started+=("$bridge")
    wait_for_name
    printf 'correct-horse-battery-staple' | secret-tool store --label=bench service bench account account-1
    daemon=$("$build/keychainctl" daemon status | sed -n 's/^pid: //p')
    started+=("$daemon")
    measured+=("keychain|login|$address|$bridge,$daemon|$bus")
fi

# The floor: constant answers, one round trip to a second process where a keychain is asked.
if [[ " $providers " == *" floor "* ]]; then
    new_bus
    export DBUS_SESSION_BUS_ADDRESS=$address
    cc -O2 -o "$scratch/secret-service-floor" Benchmarks/secret-service-floor.c $(pkg-config --cflags --libs dbus-1)
    "$scratch/secret-service-floor" "$items" >"$scratch/keeper.pid" &
    floor=$!
    started+=("$floor")
    wait_for_name
    keeper=$(cat "$scratch/keeper.pid")
    started+=("$keeper")
    measured+=("floor|login|$address|$floor,$keeper|$bus")
fi

/usr/bin/python3 Benchmarks/secret-service-cpu.py "$items" "$rounds" "${measured[@]}"
