# run: one solver configuration on one problem in one experiment, every seed in one job
# (the data set is read and the problem built once; on a cluster, one queued job)
#   -> results/runs/<paper>/<experiment>/<problem>/<solver>/<options>.parquet
# The grid of each paper is its plan's runs (pdsparse.repro.papers.<paper>.plan).


rule run:
    input:
        data=lambda wc: processed_file(PROBLEMS[wc.problem].data),
        reference=lambda wc: reference_file(wc.problem),
    output:
        "results/runs/{paper}/{experiment}/{problem}/{solver}/{options}.parquet",
    log:
        "logs/run/{paper}/{experiment}/{problem}/{solver}/{options}.log",
    wildcard_constraints:
        paper=_alternatives(PLANS),
        experiment=_alternatives({key[1] for key in RUNS}),
        problem=_alternatives(PROBLEMS),
        solver=_alternatives(SOLVERS),
        options=_alternatives({key[4] for key in RUNS}),
    conda:
        "../envs/pdsparse.yaml"
    threads: 1
    resources:
        mem_mb=mem_mb(150),
        runtime=minutes(lambda wc: len(run_of(wc).seeds) * int(run_of(wc).max_seconds / 60) + 15),
    params:
        key=run_key,
        spec=lambda wc: job_spec("run", run_key(wc)),
    # BLAS gets the job's one thread: times are CPU time of the process, and a BLAS that
    # spins threads on cores it was not given would count (and steal) more than the job's
    shell:
        "OMP_NUM_THREADS={threads} OPENBLAS_NUM_THREADS={threads} MKL_NUM_THREADS={threads}"
        " pdsparse job run {params.key:q} --data {input.data:q} --reference {input.reference:q}"
        " --out {output:q} 2> {log:q}"
