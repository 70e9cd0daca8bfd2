"""The code of scripts/bench (what every number means: docs/bench.md).

Layers, each importing only those above it:
  common         paths, seed, units, log, page-cache eviction
  procs          /proc: the daemon and its workers found, sampled (RSS, CPU), waited for
  mounts         one class per thing mounted: inkyfs, the peers, the FUSE ceiling
  measure        fresh-mount measurements, medians over runs, the daemon log watch
  tables         cells and aligned tables
Data, each generated once under --work:
  pages          the big comics (1800x2700 JPEG pages; CBZ, CBT, CBR, CB7)
  scale_library  the library-scale case's library of small comics (ZIP, tar, 7z)
  cbz_library    --library-scale N's library of N small CBZ comics, and the same tree as plain folders
The cases, each with its table:
  comics         per-comic page reads, inkyfs beside every peer
  pdf            image and rendered PDF pages
  vault_setup    the inkyfs vault and gocryptfs folder, and their mounts
  vault          Vault/ beside plain inkyfs and gocryptfs
  scale          the library-scale case: whole-library listings, inkyfs and ratarmount
  rounds         --library-scale N's two ratio rows measured in interleaved rounds (folders, then inkyfs)
  versus_folders the extracted-tree case (--library-scale N): inkyfs beside the extracted folders, with targets
  http_load      nginx, wrk and curl for the serve case; serve_process: `inkyfs serve` run and read from /proc
  serve          --only serve: inkyfs serve beside nginx on the same pages, the OPDS feeds, the server's memory
The run:
  report         every case's tables (serve_report: the serve case's); summary: the summary table; cli: options, the run, the JSON
"""
