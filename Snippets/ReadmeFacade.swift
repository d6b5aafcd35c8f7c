import Keychain

let keychain = Keychain(service: "com.example.chores").accessibility(.afterFirstUnlock)
try keychain.set("hunter2", key: "alice")
let password = try keychain.get("alice")
keychain["alice"] = nil
print(password ?? "not found")
