import CDBus
import Foundation

/// One libdbus message (`DBusMessage *`), owned: read into ``DBusValue``s, or built from them.
///
/// libdbus checks what it reads against the message's signature, so the arguments read here are
/// well formed; what they mean is checked by the Secret Service (``SecretServiceProvider``).
final class DBusMessage {
    let pointer: OpaquePointer

    /// Takes over a reference the caller holds (it is released with this object).
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        dbus_message_unref(pointer)
    }

    /// A method call to `destination`.
    static func methodCall(
        destination: String, path: String, interface: String, member: String, _ arguments: [DBusValue] = []
    ) -> DBusMessage? {
        guard let pointer = dbus_message_new_method_call(destination, path, interface, member) else { return nil }
        let message = DBusMessage(taking: pointer)
        return message.append(arguments) ? message : nil
    }

    /// A signal from `path`.
    static func signal(path: String, interface: String, member: String, _ arguments: [DBusValue]) -> DBusMessage? {
        guard let pointer = dbus_message_new_signal(path, interface, member) else { return nil }
        let message = DBusMessage(taking: pointer)
        return message.append(arguments) ? message : nil
    }

    /// The reply to this call, with `arguments`.
    func reply(_ arguments: [DBusValue]) -> DBusMessage? {
        guard let pointer = dbus_message_new_method_return(self.pointer) else { return nil }
        let message = DBusMessage(taking: pointer)
        return message.append(arguments) ? message : nil
    }

    /// The error reply to this call.
    func errorReply(_ error: DBusFailure) -> DBusMessage? {
        dbus_message_new_error(pointer, error.name, error.message).map(DBusMessage.init(taking:))
    }

    var isMethodCall: Bool { dbus_message_get_type(pointer) == DBUS_MESSAGE_TYPE_METHOD_CALL }
    var isSignal: Bool { dbus_message_get_type(pointer) == DBUS_MESSAGE_TYPE_SIGNAL }
    var path: String? { dbus_message_get_path(pointer).map { String(cString: $0) } }
    var interface: String? { dbus_message_get_interface(pointer).map { String(cString: $0) } }
    var member: String? { dbus_message_get_member(pointer).map { String(cString: $0) } }
    var sender: String? { dbus_message_get_sender(pointer).map { String(cString: $0) } }
    var signature: String { dbus_message_get_signature(pointer).map { String(cString: $0) } ?? "" }
    var expectsReply: Bool { dbus_message_get_no_reply(pointer) == 0 }

    /// The arguments; nil when one has a type ``DBusValue`` does not carry. Each descriptor
    /// (`h`) is a duplicate the caller owns (``DBusValue/unixFDs``); when the arguments cannot
    /// be read, those read before the failure are closed here.
    func arguments() -> [DBusValue]? {
        var iterator = DBusMessageIter()
        guard dbus_message_iter_init(pointer, &iterator) != 0 else { return [] }
        var values: [DBusValue] = []
        var descriptors: [Int32] = []
        repeat {
            guard let value = Self.read(&iterator, &descriptors) else {
                for descriptor in descriptors { close(descriptor) }
                return nil
            }
            values.append(value)
        } while dbus_message_iter_next(&iterator) != 0
        return values
    }

    /// Appends `arguments`; false when libdbus ran out of memory or refused one.
    func append(_ arguments: [DBusValue]) -> Bool {
        var iterator = DBusMessageIter()
        dbus_message_iter_init_append(pointer, &iterator)
        return arguments.allSatisfy { Self.write($0, to: &iterator) }
    }

    /// libdbus's type codes (`DBUS_TYPE_…`), as the `Int32` it takes: constants, where a
    /// `Character`'s `asciiValue`, worked out at every comparison, was over a third of reading a
    /// call's arguments (callgrind).
    private enum TypeCode {
        static let string = Int32(UInt8(ascii: "s"))
        static let objectPath = Int32(UInt8(ascii: "o"))
        static let signature = Int32(UInt8(ascii: "g"))
        static let boolean = Int32(UInt8(ascii: "b"))
        static let byte = Int32(UInt8(ascii: "y"))
        static let int32 = Int32(UInt8(ascii: "i"))
        static let uint32 = Int32(UInt8(ascii: "u"))
        static let uint64 = Int32(UInt8(ascii: "t"))
        static let unixFD = Int32(UInt8(ascii: "h"))
        static let variant = Int32(UInt8(ascii: "v"))
        static let structure = Int32(UInt8(ascii: "r"))
        static let array = Int32(UInt8(ascii: "a"))
        static let dictionaryEntry = Int32(UInt8(ascii: "e"))
    }

    /// The value at `iterator`; each descriptor read is also appended to `descriptors`.
    private static func read(_ iterator: inout DBusMessageIter, _ descriptors: inout [Int32]) -> DBusValue? {
        let type = dbus_message_iter_get_arg_type(&iterator)
        switch type {
        case TypeCode.string, TypeCode.objectPath, TypeCode.signature:
            var text: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&iterator, &text)
            let string = text.map { String(cString: $0) } ?? ""
            switch type {
            case TypeCode.string: return .string(string)
            case TypeCode.objectPath: return .objectPath(string)
            default: return .signature(string)
            }
        case TypeCode.boolean:
            var flag: dbus_bool_t = 0
            dbus_message_iter_get_basic(&iterator, &flag)
            return .boolean(flag != 0)
        case TypeCode.byte:
            var byte: UInt8 = 0
            dbus_message_iter_get_basic(&iterator, &byte)
            return .byte(byte)
        case TypeCode.int32:
            var number: Int32 = 0
            dbus_message_iter_get_basic(&iterator, &number)
            return .int32(number)
        case TypeCode.uint32:
            var number: UInt32 = 0
            dbus_message_iter_get_basic(&iterator, &number)
            return .uint32(number)
        case TypeCode.uint64:
            var number: UInt64 = 0
            dbus_message_iter_get_basic(&iterator, &number)
            return .uint64(number)
        case TypeCode.unixFD:
            var descriptor: Int32 = -1
            dbus_message_iter_get_basic(&iterator, &descriptor)
            descriptors.append(descriptor)
            return .unixFD(descriptor)
        case TypeCode.variant:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            return read(&inner, &descriptors).map(DBusValue.variant)
        case TypeCode.structure:
            var inner = DBusMessageIter()
            dbus_message_iter_recurse(&iterator, &inner)
            var fields: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&inner) != Int32(0) {
                guard let field = read(&inner, &descriptors) else { return nil }
                fields.append(field)
                dbus_message_iter_next(&inner)
            }
            return .structure(fields)
        case TypeCode.array:
            return readArray(&iterator, &descriptors)
        default:
            return nil
        }
    }

    private static func readArray(_ iterator: inout DBusMessageIter, _ descriptors: inout [Int32]) -> DBusValue? {
        guard let raw = dbus_message_iter_get_signature(&iterator) else { return nil }
        let signature = String(cString: raw)
        dbus_free(raw)
        let element = String(signature.dropFirst())
        var inner = DBusMessageIter()
        dbus_message_iter_recurse(&iterator, &inner)
        if element == "y" {
            var bytes: UnsafePointer<UInt8>?
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &bytes) { pointer in
                dbus_message_iter_get_fixed_array(&inner, pointer, &count)
            }
            guard count > 0, let bytes else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: bytes, count: Int(count))))
        }
        if element.hasPrefix("{") {
            let types = element.dropFirst().dropLast()
            let keyType = String(types.prefix(1))
            var entries: [DBusDictionaryEntry] = []
            while dbus_message_iter_get_arg_type(&inner) == TypeCode.dictionaryEntry {
                var entry = DBusMessageIter()
                dbus_message_iter_recurse(&inner, &entry)
                guard let key = read(&entry, &descriptors), dbus_message_iter_next(&entry) != 0,
                    let value = read(&entry, &descriptors)
                else {
                    return nil
                }
                entries.append(DBusDictionaryEntry(key: key, value: value))
                dbus_message_iter_next(&inner)
            }
            return .dictionary(key: keyType, value: String(types.dropFirst()), entries)
        }
        var elements: [DBusValue] = []
        while dbus_message_iter_get_arg_type(&inner) != Int32(0) {
            guard let value = read(&inner, &descriptors) else { return nil }
            elements.append(value)
            dbus_message_iter_next(&inner)
        }
        return .array(element: element, elements)
    }

    private static func appendBasic<Value: BitwiseCopyable>(
        _ iterator: inout DBusMessageIter, _ type: Int32, _ value: Value
    ) -> Bool {
        withUnsafeBytes(of: value) { dbus_message_iter_append_basic(&iterator, type, $0.baseAddress) != 0 }
    }

    private static func appendString(_ iterator: inout DBusMessageIter, _ type: Int32, _ text: String) -> Bool {
        text.withCString { pointer in
            var pointer: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iterator, type, &pointer) != 0
        }
    }

    private static func write(_ value: DBusValue, to iterator: inout DBusMessageIter) -> Bool {
        switch value {
        case .string(let text): return appendString(&iterator, TypeCode.string, text)
        case .objectPath(let text): return appendString(&iterator, TypeCode.objectPath, text)
        case .signature(let text): return appendString(&iterator, TypeCode.signature, text)
        case .boolean(let flag): return appendBasic(&iterator, TypeCode.boolean, dbus_bool_t(flag ? 1 : 0))
        case .byte(let byte): return appendBasic(&iterator, TypeCode.byte, byte)
        case .int32(let number): return appendBasic(&iterator, TypeCode.int32, number)
        case .uint32(let number): return appendBasic(&iterator, TypeCode.uint32, number)
        case .uint64(let number): return appendBasic(&iterator, TypeCode.uint64, number)
        case .unixFD(let descriptor): return appendBasic(&iterator, TypeCode.unixFD, descriptor)
        case .bytes(let bytes):
            return container(&iterator, TypeCode.array, contents: "y") { inner in
                bytes.withUnsafeBufferPointer { buffer in
                    var base = buffer.baseAddress
                    return withUnsafeMutablePointer(to: &base) {
                        dbus_message_iter_append_fixed_array(&inner, TypeCode.byte, $0, Int32(buffer.count)) != 0
                    }
                }
            }
        case .array(let element, let elements):
            return container(&iterator, TypeCode.array, contents: element) { inner in
                elements.allSatisfy { write($0, to: &inner) }
            }
        case .dictionary(let key, let valueType, let entries):
            return container(&iterator, TypeCode.array, contents: "{" + key + valueType + "}") { inner in
                entries.allSatisfy { entry in
                    container(&inner, TypeCode.dictionaryEntry, contents: nil) { pair in
                        write(entry.key, to: &pair) && write(entry.value, to: &pair)
                    }
                }
            }
        case .structure(let fields):
            return container(&iterator, TypeCode.structure, contents: nil) { inner in
                fields.allSatisfy { write($0, to: &inner) }
            }
        case .variant(let inner):
            return container(&iterator, TypeCode.variant, contents: inner.signature) { write(inner, to: &$0) }
        }
    }

    /// Opens a container of `type` (with `contents`' signature, for an array or a variant),
    /// fills it, and closes it.
    private static func container(
        _ iterator: inout DBusMessageIter, _ type: Int32, contents: String?,
        fill: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var inner = DBusMessageIter()
        let opened =
            if let contents {
                contents.withCString { dbus_message_iter_open_container(&iterator, type, $0, &inner) }
            } else {
                dbus_message_iter_open_container(&iterator, type, nil, &inner)
            }
        guard opened != 0 else { return false }
        guard fill(&inner) else {
            dbus_message_iter_abandon_container(&iterator, &inner)
            return false
        }
        return dbus_message_iter_close_container(&iterator, &inner) != 0
    }
}
