"""The SLURM profile (profiles/slurm) against a real single-node SLURM, with injected faults.

One cluster for the whole module (tests/slurm_cluster.py: Debian's slurm-wlm and munge,
installed with apt-get when missing and we are root, else every test here is skipped with
the reason). Snakemake runs with ``--profile profiles/slurm`` plus the settings that belong
to this test cluster, not to a site (:data:`CLUSTER_FLAGS`). Each test has its own working
directory with the tiny configuration of tests/test_workflow.py; the fault tests shrink it
further to one Face-Off panel whose runs stop on a time budget, so that a job is still
running when the fault is injected.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from slurm_cluster import SlurmCluster, ensure_installed
from test_workflow import FAST_EXIT, REPO, smk, snakemake_exe, tiny_config, workdir, write_yaml

from pdsparse.solvers import MEASURED

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.slow,  # a live SLURM cluster and workflow runs through it: minutes
    pytest.mark.xdist_group("slurm"),  # one cluster (a session fixture) per test run
    pytest.mark.skipif(
        importlib.util.find_spec("snakemake_executor_plugin_slurm") is None,
        reason="snakemake-executor-plugin-slurm is not installed (pip install -e '.[test]')",
    ),
]

PROFILE = REPO / "profiles" / "slurm"
# Settings of this test cluster, not of a site (the profile stays as users get it):
# - no accounting database here, so job states come from squeue, not sacct;
# - no accounts: do not ask sacctmgr/sshare for one;
# - first status check after 1 s instead of 40 s (the plugin then adds 10 s per check
#   that sees no job finish, so a wave of tiny jobs still takes 11-14 s to be noticed).
# The partition is the cluster's default one (Default=YES): the plugin picks it from sinfo.
CLUSTER_FLAGS = (
    "--slurm-status-command", "squeue",
    "--slurm-no-account",
    "--slurm-init-seconds-before-status-checks", "1",
)
VENV_BIN = str(Path(snakemake_exe()).parent)

# The slice compared locally and through SLURM: Face-Off Figure 1 (tiny worst-case panel,
# two of its solvers), the DGPD Table 2 and the PDBFW trace-ball figure (Figure 2): 16 jobs,
# 5 of them runs (the whole panel's five runs queued behind each other on the node's two
# CPUs, each wave waiting for the plugin's status checks).
SLICE = (
    "results/figures/faceoff/figure1.png",
    "results/tables/dgpd/table2.md",
    "results/figures/pdbfw/figure2.png",
)
# Measured times (CPU and wall clock): the only columns allowed to differ between two runs.
TIME_COLUMNS = {*MEASURED, "seconds"}

FAULT_TARGET = "results/faceoff/figure1a.parquet"
RUN_DIR = "results/runs/faceoff/figure1a/tiny_wc+avg_example_norm__logistic__l2-1_n"


# ------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def cluster():
    reason = ensure_installed()
    if reason:
        pytest.skip(reason)
    if os.geteuid() != 0:
        pytest.skip("the test cluster runs slurmd and slurmctld as root (SlurmUser=root)")
    c = SlurmCluster()
    t0 = time.monotonic()
    try:
        c.start()
        print(f"\nSLURM cluster up in {time.monotonic() - t0:.1f} s under {c.root}")
        yield c
    finally:
        c.stop()


def slurm_env(cluster: SlurmCluster) -> dict:
    """The cluster's client environment, the venv first on PATH (jobs inherit PATH), no data
    mirror."""
    env = cluster.env()
    env.pop("PDSPARSE_DATA_MIRROR", None)
    env["PATH"] = f"{VENV_BIN}:{env['PATH']}"
    return env


def slurm_cmd(wd: Path, *args: str) -> list[str]:
    return [snakemake_exe(), "-s", str(REPO / "Snakefile"), "-d", str(wd),
            "--profile", str(PROFILE), *CLUSTER_FLAGS, *FAST_EXIT, *args]


def smk_slurm(cluster, wd: Path, *args: str, timeout: float = 480):
    res = subprocess.run(slurm_cmd(wd, *args), capture_output=True, text=True,
                         timeout=timeout, env=slurm_env(cluster))
    res.output = res.stdout + res.stderr  # type: ignore[attr-defined]
    return res


def start_slurm(cluster, wd: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    """Snakemake through SLURM in the background; its output goes to wd/../snakemake.out."""
    out = wd.parent / "snakemake.out"
    with open(out, "w") as fh:
        proc = subprocess.Popen(slurm_cmd(wd, *args), stdout=fh, stderr=subprocess.STDOUT,
                                env=slurm_env(cluster))
    return proc, out


def finish(proc: subprocess.Popen, out: Path, timeout: float = 300) -> str:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
        raise AssertionError(f"snakemake still running after {timeout} s:\n"
                             + out.read_text()[-4000:]) from None
    return out.read_text()


def job_stats(output: str) -> dict[str, int]:
    """The last 'Job stats' table of a Snakemake output: rule -> count (total left out)."""
    blocks = output.split("Job stats:")
    assert len(blocks) > 1, output[-3000:]
    stats = {}
    for line in blocks[-1].splitlines()[3:]:
        m = re.fullmatch(r"(\w+)\s+(\d+)", line.strip())
        if not m:
            break
        stats[m[1]] = int(m[2])
    stats.pop("total", None)
    return stats


def fault_config(wd: Path, *, max_seconds: float, solvers: list | None = None) -> None:
    """The tiny config with Face-Off runs that last ``max_seconds`` (no tolerance, no epoch
    limit: they stop on time), one trace row per 1e5 epochs."""
    tiny_config(wd)
    cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
    cfg["faceoff"].update({"max_epochs": 10**9, "max_seconds": max_seconds, "tol": 0,
                           "eval_every": 1e5})
    if solvers is not None:
        cfg["faceoff"]["solvers"] = solvers
    write_yaml(wd / "config" / "config.yaml", cfg)


TWO_SOLVERS = [{"method": "primal_rcd", "sampling": "uniform"},
               {"method": "dual_rcd", "sampling": "uniform", "dual_step": "fixed"}]


def prebuild(wd: Path, target: str = FAULT_TARGET) -> None:
    """Everything upstream of the `run` jobs of ``target``, locally (seconds; the SLURM part
    of a fault test then starts at the runs)."""
    res = smk(wd, "--cores", "2", target, "--omit-from", "run")
    assert res.returncode == 0, res.output[-3000:]


def pdsparse_runs(wd: Path) -> list[dict]:
    """The `pdsparse run` (or `pdsparse job run`) processes working in ``wd``: pid, SLURM
    job id, --out."""
    wd = wd.resolve()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = [a.decode() for a in (proc / "cmdline").read_bytes().split(b"\0") if a]
            is_run = any(Path(a).name == "pdsparse" and (argv[i + 1:i + 2] == ["run"]
                                                         or argv[i + 1:i + 3] == ["job", "run"])
                         for i, a in enumerate(argv))
            if not is_run or Path(os.readlink(proc / "cwd")) != wd:
                continue
            environ = (proc / "environ").read_bytes().decode(errors="replace").split("\0")
        except (OSError, ValueError):
            continue  # gone meanwhile, or not ours to read
        env = dict(kv.split("=", 1) for kv in environ if "=" in kv)
        out = argv[argv.index("--out") + 1] if "--out" in argv else ""
        found.append({"pid": int(proc.name), "jobid": env.get("SLURM_JOB_ID", ""), "out": out})
    return found


def assert_no_partial_outputs(wd: Path) -> None:
    """Every Parquet under results/ reads; no temporary file is left behind."""
    for path in (wd / "results").rglob("*.parquet"):
        pd.read_parquet(path)  # raises on a truncated file
    leftovers = [p for p in (wd / "results").rglob("*")
                 if p.is_file() and (".tmp" in p.name or p.name.startswith("."))]
    assert not leftovers, leftovers


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for sub in ("results", "logs") if (root / sub).exists()
            for p in (root / sub).rglob("*") if p.is_file()}


# ------------------------------------------------------------------------------- tests


def test_slice_gives_the_same_results_locally_and_through_slurm(cluster, tmp_path):
    wds = {}
    for where in ("local", "slurm"):
        wd = wds[where] = workdir(tmp_path / where)
        tiny_config(wd)
        # time budgets far beyond the runs' few milliseconds: every run stops on its epoch
        # limit or tolerance, so the traces cannot depend on the machine's speed
        cfg = yaml.safe_load((wd / "config" / "config.yaml").read_text())
        cfg["dgpd"]["max_seconds"] = 60
        cfg["pdbfw"]["max_seconds"] = 60
        cfg["pdbfw"]["trace"]["max_seconds"] = 60
        cfg["faceoff"]["solvers"] = TWO_SOLVERS
        write_yaml(wd / "config" / "config.yaml", cfg)

    t0 = time.monotonic()
    res = smk(wds["local"], "--cores", "2", *SLICE, timeout=600)
    local_s = time.monotonic() - t0
    assert res.returncode == 0, res.output[-4000:]
    local_stats = job_stats(res.output)

    # one after the other: a local run beside the SLURM one slows its jobs, and the plugin's
    # status checks back off by 10 s each time none has finished (measured: 303 s, not 100)
    t0 = time.monotonic()
    res = smk_slurm(cluster, wds["slurm"], *SLICE, "--jobs", "4", timeout=600)
    slurm_s = time.monotonic() - t0
    assert res.returncode == 0, res.output[-4000:]
    assert "SLURM jobid" in res.output
    stats = job_stats(res.output)
    print(f"\nslice of {sum(stats.values())} jobs: {local_s:.1f} s locally (--cores 2), "
          f"{slurm_s:.1f} s through SLURM (--jobs 4)")
    assert stats == local_stats and stats["run"] >= 3

    # the same files (results/ and logs/), all of them
    local, slurm = tree(wds["local"]), tree(wds["slurm"])
    assert local == slurm, (local ^ slurm)
    for target in SLICE:
        assert target in slurm

    # the same numbers: every trace, reference, aggregate and table, the wall-clock columns
    # (time_s of a trace row, seconds of a reference) aside; the statuses say every run
    # stopped on its epochs or tolerance, never on time
    runs = sorted(p for p in local if p.startswith("results/runs/") and p.endswith(".parquet"))
    assert len(runs) == stats["run"]
    compared = [p for p in sorted(local) if p.endswith(".parquet")]
    for rel in compared:
        a, b = (pd.read_parquet(wds[w] / rel) for w in ("local", "slurm"))
        assert list(a.columns) == list(b.columns), rel
        keep = [c for c in a.columns if c not in TIME_COLUMNS]
        pd.testing.assert_frame_equal(a[keep], b[keep], check_exact=True, obj=rel)
        if "status" in a.columns:
            assert "max_time" not in set(a["status"]), rel
    for rel in sorted(p for p in local if p.endswith(".csv")):
        a, b = (pd.read_csv(wds[w] / rel) for w in ("local", "slurm"))
        assert not TIME_COLUMNS & set(a.columns), rel
        pd.testing.assert_frame_equal(a, b, check_exact=True, obj=rel)


THREE_SOLVERS = [*TWO_SOLVERS, {"method": "primal_rcd", "sampling": "importance"}]


def wait_for_runs(wd: Path, proc: subprocess.Popen, out: Path, count: int,
                  timeout: float = 120) -> list[dict]:
    """The first ``count`` `pdsparse run` processes running inside SLURM jobs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = [r for r in pdsparse_runs(wd) if r["jobid"]]
        if len(runs) >= count:
            return sorted(runs, key=lambda r: int(r["jobid"]))[:count]
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} `pdsparse run` started inside SLURM jobs:\n"
                         + out.read_text()[-3000:])


def test_jobs_cut_short_are_reported_and_a_rerun_does_only_what_is_missing(cluster, tmp_path):
    """Two runs are cut short in one Snakemake run, one by scancel, one by kill -9 from
    outside SLURM (as the OOM killer or an admin would); a third, queued behind them on the
    node's two CPUs, finishes (keep-going) and is kept. One run, both faults: the scenario
    took two runs of about 80 s each when each fault had its own."""
    wd = workdir(tmp_path)
    fault_config(wd, max_seconds=4, solvers=THREE_SOLVERS)
    prebuild(wd)
    # --retries 0: with the profile's retry the jobs would simply be submitted again within
    # the same run (the retry path is the subject of the memory test below)
    proc, out = start_slurm(cluster, wd, FAULT_TARGET, "--jobs", "4", "--retries", "0")
    cancelled, killed = wait_for_runs(wd, proc, out, 2)
    time.sleep(1)  # mid-run: the solvers are iterating
    jobs = {j["id"]: j for j in cluster.squeue()}
    assert jobs[cancelled["jobid"]]["state"] == "RUNNING", jobs
    cluster.scancel(cancelled["jobid"])
    os.kill(killed["pid"], 9)
    output = finish(proc, out)

    assert proc.returncode != 0, output[-3000:]
    # two jobs failed (each also shows its SLURM log, with the inner "Error in rule run")
    assert len(re.findall(r"SLURM-job '\d+' failed", output)) == 2, output[-3000:]
    for victim, state in ((cancelled, "CANCELLED"), (killed, "FAILED")):
        assert f"SLURM-job '{victim['jobid']}' failed, SLURM status is: '{state}'" in output
        assert victim["out"] in output  # the failed job's output named in the error
        assert cluster.job_state(victim["jobid"]) == state
        assert not (wd / victim["out"]).exists()
    assert not (wd / FAULT_TARGET).exists()  # its aggregate did not run
    assert_no_partial_outputs(wd)
    # the third run finished (keep-going) and is kept
    kept = [str(p.relative_to(wd)) for p in (wd / RUN_DIR).rglob("*.parquet")]
    assert len(kept) == 1 and kept[0] not in (cancelled["out"], killed["out"]), kept

    res = smk_slurm(cluster, wd, FAULT_TARGET, "--jobs", "4")
    assert res.returncode == 0, res.output[-4000:]
    assert job_stats(res.output) == {"run": 2, "aggregate": 1}
    assert cancelled["out"] in res.output and killed["out"] in res.output
    assert_no_partial_outputs(wd)
    assert set(pd.read_parquet(wd / FAULT_TARGET)["solver"]) == {"primal_rcd", "dual_rcd"}


def test_slurmd_down_while_jobs_are_queued_the_run_still_completes(cluster, tmp_path):
    """slurmd stops while two jobs run (in their batch script, before their job step) and
    one is queued; it comes back 15 s later.

    What happens (Slurm 22.05, plugin 2.8): the queued jobs wait (the node's CPUs are still
    allocated); the running jobs cannot launch their step ('srun: error: Task launch ...
    Communication connection failure') and end FAILED; Snakemake reports them with the
    rule and the SLURM log and, with the profile's ``retries: 1``, submits them again; once
    slurmd is back everything runs and the run completes. A step that had started before
    slurmd stopped would simply have finished (slurmstepd does not need slurmd).
    """
    wd = workdir(tmp_path)
    fault_config(wd, max_seconds=3, solvers=THREE_SOLVERS)  # three runs on 2 CPUs: one queued
    prebuild(wd)
    earlier = {j["id"] for j in cluster.squeue()}  # other tests' jobs, still listed

    def ours():
        return [j for j in cluster.squeue() if j["id"] not in earlier]

    proc, out = start_slurm(cluster, wd, FAULT_TARGET, "--jobs", "3")
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            states = [j["state"] for j in ours()]
            if "RUNNING" in states and "PENDING" in states:
                break
            time.sleep(0.1)
        before = ours()
        assert {"RUNNING", "PENDING"} <= {j["state"] for j in before}, out.read_text()
        cluster.stop_slurmd()
        time.sleep(15)
        during = ours()
    finally:
        cluster.start_slurmd()
    output = finish(proc, out)
    summary = (f"jobs before: {[(j['id'], j['state']) for j in before]}\n"
               f"after slurmd was down 15 s: {[(j['id'], j['state']) for j in during]}\n"
               f"at the end: {[(j['id'], j['state']) for j in ours()]}")
    print("\n" + summary)

    assert proc.returncode == 0, summary + "\n" + output[-4000:]
    pending = {j["id"] for j in before if j["state"] == "PENDING"}
    # the queued jobs did not start while slurmd was away
    assert all(j["state"] == "PENDING" for j in during if j["id"] in pending), summary
    failed = re.findall(r"SLURM-job '(\d+)' failed, SLURM status is: 'FAILED'", output)
    for jobid in failed:  # only jobs that were running when slurmd stopped
        assert jobid not in pending, summary
        log = next((wd / ".snakemake" / "slurm_logs").rglob(f"{jobid}.log")).read_text()
        assert "Communication connection failure" in log or "launch failed" in log, log
    assert job_stats(output) == {"run": 3, "aggregate": 1}
    assert set(pd.read_parquet(wd / FAULT_TARGET)["solver"]) == {"primal_rcd", "dual_rcd"}
    assert_no_partial_outputs(wd)
    print(f"{len(failed)} job(s) failed while slurmd was down and were retried")


# The `run` job's memory for the memory test: attempt x 250 MB. A job step holds Snakemake
# itself (inside the job) and `pdsparse run`: about 350 MB together, measured from slurmd's
# log (the batch step, Snakemake alone, about 200 MB). 250 MB is exceeded at once; the
# second attempt's 500 MB is not.
MEM_PER_ATTEMPT = 250


def test_a_process_that_escapes_its_job_does_not_outlive_the_cluster(cluster, tmp_path):
    """A job leaves a process whose parent exited (reparented to init: proctrack/linuxproc
    loses it at the job's end, as it lost a job-level Snakemake deadlocked in its own
    SIGTERM handler after a fault test); stopping the cluster kills it. A second cluster
    of its own (``cluster`` only asks that SLURM runs here), so that stopping it does not
    stop the session's."""
    pidfile = tmp_path / "orphan.pid"
    with SlurmCluster() as own:
        job = own.sbatch("--wrap", f"setsid sleep 600 & echo $! > {pidfile}; sleep 1",
                         "-o", str(tmp_path / "job.out"))
        assert own.wait_job(job) == "COMPLETED", (tmp_path / "job.out").read_text()
        orphan = int(pidfile.read_text())
        assert _alive(orphan)  # the job ended, its process did not
        assert orphan in own.leftovers()
        assert all(p.pid not in own.leftovers() for p in own.procs.values())
    assert not _alive(orphan)
    assert cluster.node_state() in ("IDLE", "MIXED", "ALLOCATED")  # the session's goes on


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_job_over_its_memory_is_killed_and_retried_with_more(cluster, tmp_path):
    wd = workdir(tmp_path)
    fault_config(wd, max_seconds=2, solvers=TWO_SOLVERS[:1])
    prebuild(wd)
    run = f"{RUN_DIR}/primal_rcd/uniform.parquet"
    res = smk_slurm(cluster, wd, FAULT_TARGET, "--jobs", "4", "--retries", "1",
                    "--set-resources", f"run:mem_mb=attempt*{MEM_PER_ATTEMPT}")
    assert res.returncode == 0, res.output[-4000:]
    out = res.output
    # attempt 1 (250 MB) killed for its memory, reported with the rule and the SLURM log
    m = re.search(r"Error in rule run:\n(?:.*\n)*?\s+log: (\S+), (\S+/slurm_logs/\S+\.log)",
                  out)
    assert m, out[-4000:]
    assert f"mem_mb={MEM_PER_ATTEMPT}," in out
    # the job's SLURM log says why (show-failed-logs prints it too, but under load the
    # console may be read before the log is flushed: assert on the file itself)
    slurm_log = Path(m[2]) if Path(m[2]).is_absolute() else wd / m[2]
    assert "Exceeded job memory limit" in slurm_log.read_text(errors="replace"), slurm_log
    assert "exceeded memory limit" in (cluster.root / "log" / "slurmd.log").read_text()
    # attempt 2, with twice the memory, succeeded
    assert f"mem_mb={2 * MEM_PER_ATTEMPT}," in out
    assert job_stats(out) == {"run": 1, "aggregate": 1}
    pd.read_parquet(wd / run)
    assert_no_partial_outputs(wd)
