import Foundation
import InkyCore

/// The number each library path's nodes are known by: the same in every mount, so the inode
/// numbers made from them are too (an SMB or NFS client, or a backup tool, may keep them).
/// Numbers are handed out in the order paths are first seen and never reused.
extension StateDatabase {
    /// The numbers of `files`, new ones given to paths seen for the first time (in one
    /// transaction); nil when the database cannot answer, and the caller numbers in memory.
    public func nodeNumbers(_ files: [LibraryFile]) -> [LibraryFile: UInt32]? {
        // Numbered already, as a library listed once is: read beside the writer, without the
        // write lock a transaction that numbers takes (a folder listed ahead waited for it).
        let known = eachInOneRead("SELECT number FROM node_numbers WHERE path = ?", files, { query, file throws(SQLiteError) in
            try query.bind(file.path, at: 1)
            return try query.step() ? UInt32(truncatingIfNeeded: query.int64(at: 0)) : nil
        }, otherwise: nil)
        var numbers: [LibraryFile: UInt32] = [:]
        var missing: [LibraryFile] = []
        for (file, number) in zip(files, known) {
            if let number { numbers[file] = number } else { missing.append(file) }
        }
        guard !missing.isEmpty else { return numbers }
        return numberAnew(missing)?.merging(numbers) { new, _ in new }
    }

    /// The numbers of `files`, adding each in one write transaction. A path numbered since the
    /// read (another thread's) is found after its insert is refused: one statement for a new
    /// path instead of a look and an insert, as every path is new in a library's first listing.
    private func numberAnew(_ files: [LibraryFile]) -> [LibraryFile: UInt32]? {
        try? withDatabase { database throws(SQLiteError) -> [LibraryFile: UInt32] in
            try database.immediateTransaction { () throws(SQLiteError) -> [LibraryFile: UInt32] in
                let add = try database.prepare("INSERT INTO node_numbers (path) VALUES (?) ON CONFLICT (path) DO NOTHING RETURNING number")
                let find = try database.prepare("SELECT number FROM node_numbers WHERE path = ?")
                var numbers: [LibraryFile: UInt32] = [:]
                for file in files where numbers[file] == nil {
                    add.reset()
                    try add.bind(file.path, at: 1)
                    if try add.step() {
                        numbers[file] = UInt32(truncatingIfNeeded: add.int64(at: 0))
                        continue
                    }
                    find.reset()
                    try find.bind(file.path, at: 1)
                    if try find.step() { numbers[file] = UInt32(truncatingIfNeeded: find.int64(at: 0)) }
                }
                return numbers
            }
        }
    }

    /// The path numbered `number`, nil when none is.
    public func nodePath(_ number: UInt32) -> LibraryFile? {
        try? withDatabase { database throws(SQLiteError) -> LibraryFile? in
            let query = try database.prepare("SELECT path FROM node_numbers WHERE number = ?")
            try query.bind(Int64(number), at: 1)
            guard try query.step(), let path = query.text(at: 0) else { return nil }
            return LibraryFile(path: path)
        } ?? nil
    }
}
