import ArgumentParser
import Foundation
import InkyCore

/// `-o` as mount.fuse3 and /etc/fstab pass it: FUSE options for libfuse, inkyfs's own settings,
/// and words that belong to mount(8) and must not reach libfuse. The mount stays nosuid and
/// nodev, and read-only but for `rm` in `Continue Reading/`, whatever the line says (`rw`, `dev`,
/// `suid` are dropped: the daemon refuses writes itself). `ro` is `--read-only`: read-only in the
/// kernel, that one write included, as a person writing `ro` in fstab means.
///
/// An inkyfs setting is any of `mount`'s own options, named as its flag with `_` for `-`:
/// `-o cache_size=512M,grayscale=1,covers=0` is `--cache-size 512M --grayscale --no-covers`. The
/// names are read from the command's definitions (`MountOptionNames`), and the settings are
/// handed back to the parser as those flags, so a new option is written once and checked once.
struct MountOptionList {
    var fuse: [String] = []
    var allowNonEmpty = false
    /// The settings, as the flags they stand for, in the order given.
    var flags: [String] = []

    static let mountWords: Set<String> = ["defaults", "nofail", "auto", "noauto", "user", "users", "nouser", "owner",
                                          "group", "_netdev", "rw", "dev", "suid", "exec", "noexec", "nosuid", "nodev"]

    /// `names` is read only when a word may be a setting: reading `mount`'s costs ~2 ms of a
    /// CLI's start (ArgumentParser describes the whole command), and most mounts have no `-o`.
    init(_ arguments: [String], names: @autoclosure () -> MountOptionNames = .mount) throws {
        var inViewsList = false
        for option in arguments.flatMap({ $0.split(separator: ",").map(String.init) }) where !option.isEmpty {
            let parts = option.split(separator: "=", maxSplits: 1).map(String.init)
            let key = parts[0], value = parts.count > 1 ? parts[1] : nil
            if inViewsList, value == nil, MountViews.names.contains(option) {
                // `views=series,arcs`: the list's commas are also -o's; a view's name is no FUSE option.
                flags[flags.count - 1] += "," + option
                continue
            }
            inViewsList = false
            if option == "nonempty" {
                allowNonEmpty = true // fuse3 mounts over anything; refusing is our check
            } else if option == "ro" {
                flags.append("--read-only")
            } else if let setting = try names().flags(key: key, value: value) {
                flags += setting
                inViewsList = key == "views"
            } else if !Self.mountWords.contains(option) && !option.hasPrefix("x-") && !option.hasPrefix("comment=") {
                fuse.append(option)
            }
        }
        fuse = ["nosuid", "nodev"] + fuse
    }

    /// A command line with every `-o` setting turned into its flag, after the other arguments
    /// (so that, as before, the fstab line wins over a flag given twice); FUSE options stay in `-o`.
    static func expanding(_ arguments: [String], names: @autoclosure () -> MountOptionNames = .mount) throws -> [String] {
        var kept: [String] = [], options: [String] = [], rest: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" {
                rest = Array(arguments[index...])
                break
            }
            if argument == "-o", index + 1 < arguments.endIndex {
                options.append(arguments[index + 1])
                index += 2
                continue
            }
            if argument.hasPrefix("-o"), argument.count > 2, !argument.hasPrefix("--") {
                options.append(String(argument.dropFirst(2)))
            } else {
                kept.append(argument)
            }
            index += 1
        }
        guard !options.isEmpty else { return arguments }
        let list = try MountOptionList(options, names: names())
        let fuse = list.fuse.filter { $0 != "nosuid" && $0 != "nodev" }
        return kept + (fuse.isEmpty && !list.allowNonEmpty ? [] : ["-o", (fuse + (list.allowNonEmpty ? ["nonempty"] : [])).joined(separator: ",")])
            + list.flags + rest
    }
}

/// Which of `mount`'s options `-o` may set, read from ArgumentParser's own description of the
/// command (the JSON `--experimental-dump-help` prints): options take a value, flags 0 or 1.
/// Left out: what makes no sense in an fstab line (help, version, foreground, force) and
/// hidden options.
struct MountOptionNames: Sendable {
    var options: Set<String> = []
    var flags: Set<String> = []

    static let notSettings: Set<String> = ["help", "version", "foreground", "force"]

    /// Read once, the first time an `-o` word needs it.
    static let mount = MountOptionNames(describing: MountCommand.self)

    init(describing command: any ParsableArguments.Type) {
        struct Description: Decodable {
            struct Command: Decodable { var arguments: [Argument]? }
            struct Argument: Decodable {
                struct Name: Decodable { var kind: String; var name: String }
                var kind: String
                var names: [Name]?
                var shouldDisplay: Bool
            }
            var command: Command
        }
        let description = try? JSONDecoder().decode(Description.self, from: Data(command._dumpHelp().utf8))
        for argument in description?.command.arguments ?? [] where argument.shouldDisplay {
            for name in argument.names ?? [] where name.kind == "long" && !Self.notSettings.contains(name.name) {
                if argument.kind == "option" { options.insert(name.name) }
                if argument.kind == "flag" { flags.insert(name.name) }
            }
        }
    }

    /// The flags `-o key[=value]` stands for; nil when it is not an inkyfs setting.
    func flags(key: String, value: String?) throws -> [String]? {
        let flag = key.replacingOccurrences(of: "_", with: "-")
        if options.contains(flag) {
            guard let value, !value.isEmpty else { throw ValidationError("-o \(key) needs a value, like \(key)=5") }
            return ["--\(flag)", value]
        }
        let on = flags.contains(flag), off = flags.contains("no-" + flag)
        guard on || off else { return nil }
        switch value {
        case nil, "1": return on ? ["--\(flag)"] : []
        case "0": return off ? ["--no-\(flag)"] : []
        default: throw ValidationError("-o \(key)=\(value!): 0 or 1")
        }
    }
}
