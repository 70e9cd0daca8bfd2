"""The vault case's material: an inkyfs vault and a gocryptfs folder holding the same comics, and
the mounts that read them (Vault/ after `inkyfs vault unlock`, gocryptfs in the foreground)."""

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .common import SERIES, log
from .mounts import CommandFailed, InkyfsMount, PeerMount, natural_key


VAULT_PASSWORD = "bench vault password"           # not a secret: a 0600 file under WORK/vault
VAULT_NAME = "Vault"                              # the folder `inkyfs vault unlock` shows
VAULT_KDF = "PBKDF2-HMAC-SHA256, 600,000 iterations"   # `inkyfs vault init`'s default
VAULT_KINDS = ("stored", "deflated")              # the solid 7z: 9 fresh mounts of a 20 s decode, left out
VAULT_UNLOCK_RUNS = 5
VAULT_APPEAR_TIMEOUT = 10.0        # seconds Vault/ may take to list once `inkyfs vault unlock` returned
GOCRYPTFS_SCRYPTN = 15             # gocryptfs -init -scryptn 15 (its default is 16)
GOCRYPTFS_INSTALL = "apt-get install gocryptfs"
VARIANTS = {"vault": "inkyfs Vault/", "plain": "inkyfs plain", "gocryptfs": "gocryptfs"}
VAULT_LEAK_MARKS = [b"page-0", b"Bench/"]          # with the comic stems: none may reach a vault mount's log or state


def run_command(argv, timeout=300):
    """Runs argv with stdin closed; returns (seconds, stdout). A non-zero exit raises CommandFailed."""
    argv = [str(a) for a in argv]
    started = time.perf_counter()
    result = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        name = " ".join([Path(argv[0]).name, *argv[1:3]])
        raise CommandFailed(f"{name} exited {result.returncode}: {result.stderr.strip()[-300:]}")
    return seconds, result.stdout


def gocryptfs_extpass(password_file):
    """-extpass once per argument, so a path with spaces stays one argument."""
    return ["-extpass", "cat", "-extpass", str(password_file)]


class VaultInkyfsMount(InkyfsMount):
    """inkyfs with --vault; unlocked right after the mount (unless unlock=False), the comic then
    being Vault/Bench/<stem>/. Its unlock times go to unlock_log; it locks again before it unmounts."""

    def __init__(self, inkyfs, library, mountpoint, extra_args, password_file, notes, unlock=True, unlock_log=None):
        super().__init__(inkyfs, library, mountpoint, extra_args, notes)
        self.inkyfs, self.password_file = inkyfs, password_file
        self.unlock_on_enter, self.unlock_log = unlock, unlock_log
        self.unlocked = False

    def __enter__(self):
        super().__enter__()
        if self.unlock_on_enter:
            try:
                times = self.unlock_vault()
            except BaseException:
                self.__exit__(None, None, None)
                raise
            if self.unlock_log is not None:
                self.unlock_log.append(times)
        return self

    def unlock_vault(self):
        """`inkyfs vault unlock MOUNT`, then list Vault/ until it answers: both times from the start, in ms."""
        started = time.perf_counter()
        run_command([self.inkyfs, "vault", "unlock", self.mountpoint, "--password-file", self.password_file], timeout=60)
        returned = time.perf_counter()
        self.unlocked = True
        vault = self.mountpoint / VAULT_NAME
        while True:
            try:
                os.listdir(vault)
                break
            except FileNotFoundError:
                if time.perf_counter() - returned > VAULT_APPEAR_TIMEOUT:
                    raise CommandFailed(f"{vault} did not list within {VAULT_APPEAR_TIMEOUT:.0f} s of `inkyfs vault unlock`")
                time.sleep(0.001)
        return {"command_ms": (returned - started) * 1000, "listed_ms": (time.perf_counter() - started) * 1000}

    def lock_vault(self):
        """`inkyfs vault lock MOUNT`: its time in ms, and whether Vault/ is gone right after."""
        seconds, _ = run_command([self.inkyfs, "vault", "lock", self.mountpoint], timeout=30)
        self.unlocked = False
        return {"lock_ms": seconds * 1000, "gone_after_lock": not (self.mountpoint / VAULT_NAME).exists()}

    def release(self):
        if self.unlocked:
            try:
                self.lock_vault()
            except (CommandFailed, OSError, subprocess.SubprocessError) as error:
                self.notes.append(f"inkyfs vault lock before the unmount failed: {error}")
        super().release()

    def comic_dir(self, comic):
        return self.mountpoint / VAULT_NAME / SERIES / comic.stem


class GocryptfsMount(PeerMount):
    """gocryptfs in the foreground on the cipher folder; a comic is a folder of its extracted pages."""

    def __init__(self, cipher, mountpoint, password_file, log_path, notes):
        command = ["gocryptfs", "-fg", "-q", *gocryptfs_extpass(password_file), str(cipher), str(mountpoint)]
        super().__init__("gocryptfs", cipher, mountpoint, log_path, notes, command=command)
        self.mount_timeout = 60.0

    def comic_dir(self, comic):
        return self.mountpoint / comic.stem

    def page_path(self, comic, number):
        return self.comic_dir(comic) / comic.members[number - 1]

    def list_pages(self, comic):
        return sorted(self.comic_dir(comic).iterdir(), key=natural_key)


@dataclass
class VaultSetup:
    root: Path            # WORK/vault, made afresh every run
    password_file: Path
    vault: Path           # the inkyfs vault
    empty: Path           # the library of the Vault/ mounts: an empty folder, so only Vault/ names the comics
    cipher: Path          # the gocryptfs cipher folder
    states: Path          # every inkyfs mount's fresh --state DIR, vault-* and plain-*


def vault_setup(work):
    root = work / "vault"
    return VaultSetup(root=root, password_file=root / "password", vault=root / "vault", empty=root / "empty-library",
                      cipher=root / "gocryptfs-cipher", states=root / "states")


def prepare_vault(args, setup, comics, notes):
    """WORK/vault afresh, with a new inkyfs vault holding the comics as Bench/<file name>; returns timings."""
    shutil.rmtree(setup.root, ignore_errors=True)
    for folder in (setup.empty, setup.states):
        folder.mkdir(parents=True)
    setup.password_file.write_text(VAULT_PASSWORD + "\n")
    setup.password_file.chmod(0o600)
    auth = ["--vault", setup.vault, "--password-file", setup.password_file]
    log(f"bench: vault: inkyfs vault init + add of {len(comics)} comics into {setup.vault}")
    timings = {"comics": [c.path.name for c in comics],
               "vault_init_s": run_command([args.inkyfs, "vault", "init", *auth])[0],
               "vault_add_s": run_command([args.inkyfs, "vault", "add", *[c.path for c in comics], "--into", SERIES,
                                           "--keep", *auth], timeout=1800)[0]}
    seconds, out = run_command([args.inkyfs, "vault", "list", "--json", *auth])
    timings["vault_list_ms"] = seconds * 1000
    listed = {row["path"]: row["size"] for row in json.loads(out)}
    for comic in comics:
        size = listed.get(f"{SERIES}/{comic.path.name}")
        if size != comic.path.stat().st_size:
            notes.append(f"vault: `inkyfs vault list` shows {SERIES}/{comic.path.name} with size {size}, "
                         f"the archive has {comic.path.stat().st_size}")
    return timings


def prepare_gocryptfs(args, setup, comics, notes):
    """gocryptfs -init, then every comic's pages extracted (7z x) into a folder of its own through the mount."""
    setup.cipher.mkdir()
    log(f"bench: vault: gocryptfs -init -scryptn {GOCRYPTFS_SCRYPTN}, then the comics' pages extracted into it")
    timings = {"init_s": run_command(["gocryptfs", "-init", "-q", "-scryptn", GOCRYPTFS_SCRYPTN,
                                      *gocryptfs_extpass(setup.password_file), setup.cipher])[0]}
    with GocryptfsMount(setup.cipher, args.work / "mnt" / "gocryptfs", setup.password_file,
                        args.work / "logs" / "gocryptfs.log", notes) as m:
        started = time.perf_counter()
        for comic in comics:
            run_command(["7z", "x", "-y", "-bd", f"-o{m.comic_dir(comic)}", comic.path], timeout=1800)
        timings["copy_s"] = time.perf_counter() - started
    return timings
