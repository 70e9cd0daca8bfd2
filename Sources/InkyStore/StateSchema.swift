/// The state database's schema, one migration per version. Never edit a released migration:
/// add the next one. v1 shipped the index alone; v2 added reading state; v3 empties the index,
/// whose listings were made while libarchive dropped every page with a non-ASCII name (the
/// index is rebuilt on demand; reading state is kept); v4 empties it again, for listings made
/// before a stored ZIP page carried its data range, which lets the daemon read it without a
/// worker (rebuilt by listing ahead at the next mount); v5 numbers library paths for inode
/// numbers that stay the same across remounts; v6 stores listings in `ListingCodec`'s binary
/// form (older JSON rows are still read, and rewritten binary when next stored); v7 adds each
/// comic's metadata (ComicInfo.xml or its file name) and its story arcs, for the views, and
/// empties the index so that every comic is listed again, this time with its metadata; v9
/// keeps the page hashes `inkyfs duplicates` computed (`PageHashes`); v10 adds the accounts of
/// `inkyfs serve` (`Accounts`), each comic's KOReader document digests (`DocumentDigests`) and
/// the device that last pushed progress through the sync protocol (`SyncDevices`), and what
/// KOReader syncs that is no comic of the library (`sync_elsewhere`, kept as it was sent); v11
/// lists again the comics whose metadata came from their file name alone, which now take their
/// series from their folder when the name says none (`Batman (2016)/Issue 001.cbz`).
enum StateSchema {
    static let migrator = Migrator([
        (1, """
            CREATE TABLE comic_index (
                path TEXT PRIMARY KEY,
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                listing TEXT,          -- JSON ComicListing, or NULL when the comic failed
                error TEXT,            -- JSON ComicError when it failed
                indexed_at REAL NOT NULL
            );
            """),
        (2, """
            CREATE TABLE reading (
                path TEXT PRIMARY KEY,
                page_count INTEGER NOT NULL,
                last_page INTEGER NOT NULL,   -- 0-based
                pages_seen TEXT NOT NULL,     -- JSON array of 0-based page numbers
                updated_at REAL NOT NULL
            );
            CREATE INDEX reading_recent ON reading(updated_at DESC);
            CREATE TABLE bookmarks (
                path TEXT NOT NULL,
                page INTEGER NOT NULL,        -- 0-based
                created_at REAL NOT NULL,
                PRIMARY KEY (path, page)
            );
            """),
        (3, "DELETE FROM comic_index;"),
        (4, "DELETE FROM comic_index;"),
        (5, """
            CREATE TABLE node_numbers (
                number INTEGER PRIMARY KEY,   -- from 1; part of the inode numbers of the path's nodes
                path TEXT NOT NULL UNIQUE     -- absolute: a library folder, comic or file
            );
            """),
        (6, "ALTER TABLE comic_index ADD COLUMN listing_bin BLOB;   -- ListingCodec; then listing is NULL"),
        (7, """
            CREATE TABLE comic_metadata (
                id INTEGER PRIMARY KEY,       -- kept while the path stays: views number entries with it
                path TEXT NOT NULL UNIQUE,    -- as comic_index.path
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                source TEXT NOT NULL,         -- comicInfo, coMet, comicBookInfo or fileName
                series TEXT, number TEXT, volume INTEGER, title TEXT, publisher TEXT,
                year INTEGER, month INTEGER, page_count INTEGER, language TEXT, manga TEXT
            );
            CREATE INDEX comic_metadata_series ON comic_metadata(series, volume);
            CREATE TABLE comic_arcs (
                comic INTEGER NOT NULL,       -- comic_metadata.id
                position INTEGER NOT NULL,    -- the arc's place in the comic's StoryArc list
                arc TEXT NOT NULL,
                arc_number TEXT,
                PRIMARY KEY (comic, position)
            );
            CREATE INDEX comic_arcs_arc ON comic_arcs(arc);
            DELETE FROM comic_index;
            """),
        // The metadata views ask for By Publisher/'s folders and Recently Added/'s newest comics
        // on demand (MetadataViewQueries): 416 ms and 49 ms at 100,000 comics without these, 24 and 0.07 with.
        (8, """
            CREATE INDEX comic_metadata_publisher ON comic_metadata(publisher, series, volume);
            CREATE INDEX comic_metadata_recent ON comic_metadata(mtime_ns DESC, path);
            """),
        (9, """
            CREATE TABLE page_hashes (
                path TEXT PRIMARY KEY,        -- as comic_index.path
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                pages BLOB NOT NULL           -- each page's SHA-256 in reading order, 32 bytes apiece
            );
            """),
        (10, """
            CREATE TABLE accounts (
                name TEXT PRIMARY KEY,
                kdf TEXT NOT NULL,            -- 'pbkdf2-sha256' over md5hex(password): see AccountKey
                iterations INTEGER NOT NULL,
                salt BLOB NOT NULL,
                hash BLOB NOT NULL,
                created_at REAL NOT NULL
            );
            CREATE TABLE document_digests (
                path TEXT PRIMARY KEY,        -- as comic_index.path
                size INTEGER NOT NULL,
                mtime_ns INTEGER NOT NULL,
                inode INTEGER NOT NULL,
                file_md5 TEXT,                -- KOReader's partial MD5 of the file itself
                cbz_md5 TEXT                  -- and of the CBZ served for it; NULL until first served
            );
            CREATE INDEX document_digests_file ON document_digests(file_md5);
            CREATE INDEX document_digests_cbz ON document_digests(cbz_md5);
            CREATE TABLE sync_devices (
                path TEXT PRIMARY KEY,        -- as reading.path
                device TEXT NOT NULL,
                device_id TEXT,
                updated_at REAL NOT NULL      -- reading.updated_at it wrote: the device is the writer while they agree
            );
            CREATE TABLE sync_elsewhere (     -- progress of documents that are no comic of the library (an EPUB)
                account TEXT NOT NULL,
                document TEXT NOT NULL,       -- KOReader's digest
                progress TEXT NOT NULL, percentage REAL NOT NULL,
                device TEXT NOT NULL, device_id TEXT,
                updated_at INTEGER NOT NULL,  -- seconds, as KOReader's timestamp
                PRIMARY KEY (account, document)
            );
            """),
        (11, "DELETE FROM comic_index WHERE path IN (SELECT path FROM comic_metadata WHERE source = 'fileName');"),
    ])
}
