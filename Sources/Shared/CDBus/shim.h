// libdbus, the reference D-Bus client library (Debian's libdbus-1-dev to build).
#include <dbus/dbus.h>
