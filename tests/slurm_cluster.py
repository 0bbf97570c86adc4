"""A real single-node SLURM cluster in a temporary directory, for integration tests.

Debian's ``slurm-wlm`` and ``munge`` packages; every daemon (munged, slurmctld, slurmd) is
started here in the foreground (``-F`` / ``-D``) as a child process, so this module owns
their PIDs and stops them by PID (SIGTERM, then SIGKILL), never by name. Nothing is read
from or written to /etc/slurm, /etc/munge or /run: the munge key and socket, slurm.conf,
state, spool, logs and pid files all live under one temporary directory, and the client
commands (sbatch, squeue, scancel, scontrol, sinfo, srun) find that slurm.conf through the
``SLURM_CONF`` environment variable (:meth:`SlurmCluster.env`). Ports are picked free at
start, so a second cluster or a leftover one does not clash.

Configuration (checked on Debian 12, Slurm 22.05.8, as root, no cgroups, no slurmdbd):

- munged: its own key (1024 random bytes, mode 0400), socket, pid, log and seed files;
  as root it needs ``--force``. slurm.conf points both auth and credentials at that socket
  (``AuthInfo=socket=...``).
- ``SlurmUser=root``, ``SlurmdUser=root``; ``ProctrackType=proctrack/linuxproc``,
  ``TaskPlugin=task/none`` (no cgroup setup needed).
- No accounting database (``AccountingStorageType=accounting_storage/none``): ``sacct``
  does not work, so Snakemake's SLURM plugin must query ``squeue``
  (``--slurm-status-command squeue``). ``squeue --states=all`` keeps finished jobs for
  ``MinJobAge`` seconds (300 here, the default); the plugin needs it to be at least 3x its
  first status-check interval, or it falls back to sacct.
- ``SelectType=select/cons_tres`` with ``CR_Core_Memory``: cores and ``--mem`` are
  consumable resources, the node's RealMemory is the machine's minus a margin.
- Memory enforcement works without cgroups: ``JobAcctGatherType=jobacct_gather/linux``,
  ``JobAcctGatherFrequency=task=1``, ``JobAcctGatherParams=OverMemoryKill`` make
  slurmstepd sample each step's RSS (summed over its processes) every second and kill a
  step past the job's ``--mem`` ("StepId=1.batch exceeded memory limit (429760512 >
  104857600), being killed" in slurmd.log, "Exceeded job memory limit" in the job's
  output); the job ends FAILED (signal 9), not OUT_OF_MEMORY (that state needs the cgroup
  plugins). :func:`check_enforcement` checks it in about 4 s.
- Time enforcement: ``OverTimeLimit=0``, ``KillWait=5``: a job past its ``--time`` is
  signalled and ends TIMEOUT. slurmctld checks time limits on its own ~30 s cycle, so a
  ``--time=1`` job ends about 90 s after it started (measured: 90 s).
- ``ReturnToService=2``: a node set DOWN (slurmd gone for ``SlurmdTimeout``) comes back by
  itself as soon as its slurmd registers again. A job step already running survives a
  stopped slurmd (slurmstepd does not need it); launching a new step (srun) fails.
- The node is declared with the CPUs, sockets and cores ``slurmd -C`` reports and a
  RealMemory 1 GiB below the machine's; ``DefMemPerCPU=1000`` for jobs without ``--mem``.
- Snakemake's slurm-jobstep plugin strips SLURM_CONF from the ``srun`` it runs inside each
  job, so the cluster also provides client wrappers (root/bin, first on PATH in
  :meth:`SlurmCluster.env`) that set it; jobs inherit PATH.

Start-up takes about 1 s here (Debian 12, 2 cores); installing the packages about 10 s.

Used by tests/test_slurm.py; runnable by hand as ``python tests/slurm_cluster.py`` (starts a
cluster, runs :func:`check_enforcement`, stops it).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

CLIENTS = ("sbatch", "srun", "squeue", "scancel", "scontrol", "sinfo", "sacct", "salloc",
           "sstat")
BINARIES = ("slurmctld", "slurmd", "munged", "sbatch", "squeue", "scancel", "scontrol")
PACKAGES = ("slurm-wlm", "munge")


def missing_binaries() -> list[str]:
    """The SLURM/munge programs not on PATH (or in /usr/sbin, which a non-login PATH lacks)."""
    return [b for b in BINARIES if _which(b) is None]


def _which(name: str) -> str | None:
    # the system's programs first: never a wrapper of ours (SlurmCluster.bin) found on PATH
    return shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin") or shutil.which(name)


def ensure_installed(timeout: float = 600) -> str | None:
    """Install slurm-wlm and munge with apt-get when missing (root and apt-get needed).

    Returns None when everything is there (installed now or before), else the reason, for
    ``pytest.skip(reason)``.
    """
    missing = missing_binaries()
    if not missing:
        return None
    if os.geteuid() != 0:
        return f"SLURM is not installed ({', '.join(missing)} missing) and we are not root"
    if shutil.which("apt-get") is None:
        return f"SLURM is not installed ({', '.join(missing)} missing) and there is no apt-get"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
    log = []
    for cmds in ([install], [["apt-get", "update"], install]):
        ok = True
        for cmd in cmds:
            try:
                res = subprocess.run(
                    cmd, capture_output=True, text=True, timeout=timeout, env=env
                )
            except subprocess.TimeoutExpired:
                return f"'{' '.join(cmd)}' timed out after {timeout:.0f} s"
            if res.returncode != 0:
                log.append(f"$ {' '.join(cmd)}\n{(res.stdout + res.stderr)[-1500:]}")
                ok = False
                break
        if ok and not missing_binaries():
            return None
    return "could not install SLURM with apt-get:\n" + "\n".join(log)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _machine_memory_mb() -> int:
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    raise RuntimeError("no MemTotal in /proc/meminfo")


class SlurmError(RuntimeError):
    pass


class SlurmCluster:
    """One slurmctld + one slurmd + munged, all under ``root`` (a new temporary directory by
    default, removed by :meth:`stop` unless ``keep=True``).

    >>> with SlurmCluster() as cluster:          # doctest: +SKIP
    ...     subprocess.run(["sbatch", "--wrap", "hostname"], env=cluster.env())
    """

    def __init__(
        self,
        root: str | Path | None = None,
        *,
        partition: str = "debug",
        cluster_name: str = "pdsparse",
        node_name: str = "pdsparse-node",
        cpus: int | None = None,
        memory_mb: int | None = None,
        min_job_age: int = 300,
        slurmd_timeout: int = 300,
        keep: bool = False,
    ):
        self._own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="slurm-")) if root is None else Path(root)
        self.partition = partition
        self.cluster_name = cluster_name
        self.node_name = node_name
        self.cpus = cpus or os.cpu_count() or 1
        self.memory_mb = memory_mb or max(_machine_memory_mb() - 1024, 1024)
        self.min_job_age = min_job_age
        self.slurmd_timeout = slurmd_timeout
        self.keep = keep
        self.hostname = socket.gethostname().split(".")[0]
        self.conf = self.root / "etc" / "slurm.conf"
        self.munge_socket = self.root / "munge" / "munge.socket"
        self.bin = self.root / "bin"
        self.procs: dict[str, subprocess.Popen] = {}
        self.ctld_port = self.slurmd_port = 0

    # -------------------------------------------------------------------- environment

    def env(self, base: dict | None = None) -> dict:
        """``base`` (default: os.environ) with SLURM_CONF set to this cluster's slurm.conf,
        the client wrappers (:meth:`_write_client_wrappers`) first on PATH and /usr/sbin
        on it."""
        env = dict(os.environ if base is None else base)
        env["SLURM_CONF"] = str(self.conf)
        path = [p for p in env.get("PATH", "/usr/bin:/bin").split(":") if p]
        if "/usr/sbin" not in path:
            path.append("/usr/sbin")
        env["PATH"] = ":".join([str(self.bin), *path])
        return env

    def _write_client_wrappers(self) -> None:
        """root/bin/<client> for each client command: ``SLURM_CONF=<ours> exec <client>``.

        Snakemake's slurm-jobstep plugin (0.6) runs the job's command with ``srun`` in an
        environment stripped of every SLURM_* variable but the job's identity, SLURM_CONF
        included; on a real cluster srun then reads /etc/slurm/slurm.conf (or asks
        configless slurmd), here it would find no configuration ("Could not establish a
        configuration source"). Jobs inherit PATH, so these wrappers restore it.
        """
        self.bin.mkdir(parents=True, exist_ok=True)
        for name in CLIENTS:
            real = _which(name)
            if real is None:
                continue
            wrapper = self.bin / name
            wrapper.write_text(
                f'#!/bin/sh\nSLURM_CONF="{self.conf}" exec {real} "$@"\n'
            )
            wrapper.chmod(0o755)

    def run(self, *cmd: str, timeout: float = 30, check: bool = True):
        res = subprocess.run(
            list(cmd), capture_output=True, text=True, timeout=timeout, env=self.env()
        )
        if check and res.returncode != 0:
            raise SlurmError(f"{' '.join(cmd)} failed ({res.returncode}): {res.stderr.strip()}")
        return res

    # -------------------------------------------------------------------- configuration

    @property
    def topology(self) -> str:
        """The node's CPUs, sockets, cores and threads as ``slurmd -C`` reports them (else
        only CPUs=), so that slurmd does not find its hardware different from slurm.conf."""
        keys = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
        try:
            res = subprocess.run([_which("slurmd") or "slurmd", "-C"], capture_output=True,
                                 text=True, timeout=30)
            fields = dict(f.split("=", 1) for f in res.stdout.split() if "=" in f)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            fields = {}
        if all(k in fields for k in keys) and int(fields["CPUs"]) == self.cpus:
            return " ".join(f"{k}={fields[k]}" for k in keys)
        return f"CPUs={self.cpus}"

    def _dirs(self) -> dict[str, Path]:
        return {
            name: self.root / name
            for name in ("etc", "munge", "state", "spool", "log", "run")
        }

    def slurm_conf_text(self) -> str:
        d = self._dirs()
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={self.hostname}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d['state']}",
            f"SlurmdSpoolDir={d['spool']}/%n",
            f"SlurmctldPidFile={d['run']}/slurmctld.pid",
            f"SlurmdPidFile={d['run']}/slurmd.pid",
            f"SlurmctldLogFile={d['log']}/slurmctld.log",
            f"SlurmdLogFile={d['log']}/slurmd.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "MpiDefault=none",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SwitchType=switch/none",
            "LaunchParameters=use_interactive_step",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            # memory enforcement without cgroups: sample RSS every second, kill past --mem
            "JobAcctGatherType=jobacct_gather/linux",
            "JobAcctGatherFrequency=task=1",
            "JobAcctGatherParams=OverMemoryKill",
            # time enforcement: no grace past --time, a short wait between SIGTERM and SIGKILL
            "OverTimeLimit=0",
            "KillWait=5",
            f"MinJobAge={self.min_job_age}",
            f"SlurmdTimeout={self.slurmd_timeout}",
            "ReturnToService=2",
            "InactiveLimit=0",
            "MessageTimeout=10",
            "DefMemPerCPU=1000",
            f"NodeName={self.node_name} NodeHostname={self.hostname} NodeAddr=127.0.0.1"
            f" {self.topology} RealMemory={self.memory_mb} State=UNKNOWN",
            f"PartitionName={self.partition} Nodes={self.node_name} Default=YES"
            " MaxTime=INFINITE State=UP",
        ]
        return "\n".join(lines) + "\n"

    # -------------------------------------------------------------------- lifecycle

    def start(self, timeout: float = 60) -> SlurmCluster:
        reason = ensure_installed()
        if reason:
            raise SlurmError(reason)
        try:
            for path in self._dirs().values():
                path.mkdir(parents=True, exist_ok=True)
                path.chmod(0o700)
            (self.root / "spool" / self.node_name).mkdir(exist_ok=True)
            self._write_client_wrappers()
            self._start_munged()
            self.ctld_port, self.slurmd_port = free_port(), free_port()
            while self.slurmd_port == self.ctld_port:
                self.slurmd_port = free_port()
            self.conf.write_text(self.slurm_conf_text())
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-f", str(self.conf)])
            self._wait(lambda: self.run("scontrol", "ping", check=False).returncode == 0,
                       timeout, "slurmctld to answer 'scontrol ping'")
            self.start_slurmd(timeout=timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munged(self) -> None:
        d = self._dirs()["munge"]
        key = d / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))  # as `dd if=/dev/urandom bs=1 count=1024`
            key.chmod(0o400)
        cmd = [
            _which("munged"), "--foreground",
            f"--socket={self.munge_socket}", f"--key-file={key}",
            f"--pid-file={d / 'munged.pid'}", f"--log-file={d / 'munged.log'}",
            f"--seed-file={d / 'munged.seed'}",
        ]
        if os.geteuid() == 0:
            cmd.append("--force")  # munged refuses to run as root otherwise
        self._spawn("munged", cmd, log=d / "munged.out")
        self._wait(self.munge_socket.exists, 20, "munged to create its socket")

    def start_slurmd(self, timeout: float = 60) -> None:
        """(Re)start slurmd (unless it runs) and wait until the node is up (not down)."""
        if "slurmd" in self.procs and self.procs["slurmd"].poll() is None:
            return
        self._spawn(
            "slurmd", [_which("slurmd"), "-D", "-N", self.node_name, "-f", str(self.conf)]
        )
        self._wait(lambda: self.node_state().split("+")[0].rstrip("*~#%$@")
                   in {"IDLE", "MIXED", "ALLOCATED", "COMPLETING"},
                   timeout, f"node {self.node_name} to be up")

    def stop_slurmd(self) -> None:
        """Stop slurmd only (its running job steps, children of slurmstepd, go on)."""
        self._terminate("slurmd")

    def _spawn(self, name: str, cmd: list, log: Path | None = None) -> None:
        with open(log or self._dirs()["log"] / f"{name}.out", "ab") as out:
            self.procs[name] = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env(), start_new_session=True,
            )

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [n for n, p in self.procs.items() if p.poll() is not None]
            if dead:
                raise SlurmError(f"{', '.join(dead)} exited while waiting for {what}\n"
                                 + self.log_tails())
            try:
                if ready():
                    return
            except (SlurmError, subprocess.TimeoutExpired, OSError):
                pass
            time.sleep(0.25)
        raise SlurmError(f"timed out after {timeout:.0f} s waiting for {what}\n"
                         + self.log_tails())

    def _terminate(self, name: str, grace: float = 10) -> None:
        proc = self.procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def stop(self) -> None:
        """Cancel every job, stop slurmd, slurmctld and munged (by PID), then kill what
        escaped the jobs' ends (:meth:`kill_leftovers`)."""
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            try:
                self.run("scancel", "--full", "--partition", self.partition,
                         check=False, timeout=15)
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and self.squeue(states="RUNNING,COMPLETING"):
                    time.sleep(0.5)
            except (subprocess.TimeoutExpired, SlurmError, OSError):
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            self._terminate(name)
        self.kill_leftovers()
        if self._own_root and not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)

    def leftovers(self) -> list[int]:
        """PIDs of live processes whose environment names this cluster's slurm.conf: the
        jobs' processes and the clients run with :meth:`env` (not this process, not the
        daemons it runs).

        ``proctrack/linuxproc`` finds a job's processes by their parent chain from its
        slurmstepd, so a process whose parent exited (reparented to init) escapes the job's
        end. One such: a job-level Snakemake (9.27) that gets SIGTERM while it handles its
        job's failure deadlocks in its own signal handler (``exit_gracefully`` takes the
        scheduler's lock, which the interrupted frame beneath it holds) and stayed, asleep,
        after the test that killed its job had ended. On a cluster with ``proctrack/cgroup``
        SLURM's SIGKILL after ``KillWait`` reaches it."""
        needle = f"SLURM_CONF={self.conf}".encode() + b"\0"
        own = {os.getpid(), *(p.pid for p in self.procs.values())}
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) in own:
                continue
            try:
                environ = (entry / "environ").read_bytes() + b"\0"
            except OSError:  # gone, or not ours to read
                continue
            if b"\0" + needle in b"\0" + environ:
                found.append(int(entry.name))
        return found

    def kill_leftovers(self, timeout: float = 10) -> list[int]:
        """SIGKILL every :meth:`leftovers` process (the daemons are stopped first: none is
        started meanwhile) and wait until they are gone; their PIDs."""
        pids = self.leftovers()
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):  # gone, or not ours
                pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and set(pids) & set(self.leftovers()):
            time.sleep(0.1)
        return pids

    def __enter__(self) -> SlurmCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -------------------------------------------------------------------- queries

    def node_state(self) -> str:
        res = self.run("sinfo", "-h", "-N", "-n", self.node_name, "-o", "%T")
        return res.stdout.strip().upper()

    def squeue(self, states: str = "all", name: str | None = None) -> list[dict]:
        """Jobs as dicts (id, name, state, reason, command), finished ones included with the
        default ``states='all'`` (for MinJobAge seconds)."""
        args = ["squeue", "-h", "--states", states, "-o", "%i|%j|%T|%r|%o"]
        if name:
            args += ["--name", name]
        res = self.run(*args)
        jobs = []
        for line in res.stdout.splitlines():
            parts = line.split("|", 4)
            if len(parts) == 5:
                jobs.append(dict(zip(("id", "name", "state", "reason", "command"), parts,
                                     strict=True)))
        return jobs

    def scancel(self, jobid: str | int) -> None:
        self.run("scancel", str(jobid))

    def job_state(self, jobid: str | int) -> str:
        res = self.run("scontrol", "show", "job", str(jobid), "-o", check=False)
        for field in res.stdout.split():
            if field.startswith("JobState="):
                return field.split("=", 1)[1]
        return "UNKNOWN"

    def sbatch(self, *args: str, cwd: str | Path | None = None) -> str:
        res = subprocess.run(
            ["sbatch", "--parsable", *args], capture_output=True, text=True, timeout=30,
            env=self.env(), cwd=cwd or self.root,
        )
        if res.returncode != 0:
            raise SlurmError(f"sbatch {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout.strip().split(";")[0]

    def wait_job(self, jobid: str | int, timeout: float = 180) -> str:
        """Wait until the job has ended; its final state (COMPLETED, FAILED, TIMEOUT, ...)."""
        final = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
                 "NODE_FAIL", "BOOT_FAIL", "DEADLINE", "PREEMPTED"}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.job_state(jobid)
            if state in final:
                return state
            time.sleep(0.5)
        raise SlurmError(f"job {jobid} still {self.job_state(jobid)} after {timeout:.0f} s")

    def log_tails(self, lines: int = 15) -> str:
        out = []
        for path in sorted(self._dirs()["log"].glob("*")) + sorted(
            self._dirs()["munge"].glob("*.log")
        ):
            try:
                tail = path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                continue
            out.append(f"--- {path.name} ---\n" + "\n".join(tail))
        return "\n".join(out)


def check_enforcement(cluster: SlurmCluster, time_limit: bool = True) -> dict[str, str]:
    """Submit a job that allocates 400 MB under ``--mem=100`` and (with ``time_limit``) one
    that sleeps past ``--time=1``; their final states (seen: FAILED, killed for its memory,
    and TIMEOUT)."""
    python = shutil.which("python3") or "python3"
    hog = f"{python} -c 'import time; b = bytearray(400 * 2**20); time.sleep(30)'"
    jobs = {"memory": cluster.sbatch("--mem=100", "--time=5", "-o", "/dev/null", "--wrap", hog)}
    if time_limit:
        jobs["time"] = cluster.sbatch("--mem=50", "--time=1", "-o", "/dev/null",
                                      "--wrap", "sleep 300")
    return {what: cluster.wait_job(jobid, timeout=200) for what, jobid in jobs.items()}


if __name__ == "__main__":
    import sys

    t0 = time.monotonic()
    with SlurmCluster(keep="--keep" in sys.argv) as c:
        print(f"up in {time.monotonic() - t0:.1f} s under {c.root}: {c.node_state()}")
        t1 = time.monotonic()
        print(check_enforcement(c, time_limit="--no-time" not in sys.argv),
              f"in {time.monotonic() - t1:.0f} s")
