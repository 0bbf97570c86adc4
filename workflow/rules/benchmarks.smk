# benchmarks (not in `all`): `snakemake --cores 2 benchmark_peers benchmark_epoch_vs_matvec`.
# They time solvers against each other, so each takes the whole machine (threads: 2) and runs
# alone; the scripts fetch their own data from the mirror and write atomically.


rule benchmark_peers:
    output:
        parquet="results/benchmarks/peers.parquet",
        md="results/benchmarks/peers.md",
        json="results/benchmarks/peers.json",
    log:
        "logs/benchmarks/peers.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 2
    resources:
        mem_mb=mem_mb(0, base=4000),
        runtime=minutes(40),
    shell:
        "python benchmarks/peers.py 2> {log}"


rule benchmark_epoch_vs_matvec:
    output:
        parquet="results/benchmarks/epoch_vs_matvec.parquet",
        md="results/benchmarks/epoch_vs_matvec.md",
        json="results/benchmarks/epoch_vs_matvec.json",
    log:
        "logs/benchmarks/epoch_vs_matvec.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 2
    resources:
        mem_mb=mem_mb(0, base=2000),
        runtime=minutes(10),
    shell:
        "python benchmarks/epoch_vs_matvec.py --out results/benchmarks/epoch_vs_matvec 2> {log}"


# DGPD (benchmarks/README.md, "DGPD"): ours against copt on the paper's data; epoch and DGPD
# iteration costs. Data are prepared once into results/benchmarks/data/ (a cache, reused).
rule benchmark_dgpd_peers:
    output:
        parquet="results/benchmarks/dgpd_peers.parquet",
        md="results/benchmarks/dgpd_peers.md",
        json="results/benchmarks/dgpd_peers.json",
    log:
        "logs/benchmarks/dgpd_peers.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 2
    resources:
        mem_mb=mem_mb(0, base=8000),
        runtime=minutes(150),
    shell:
        "python benchmarks/dgpd_peers.py 2> {log}"


rule benchmark_dgpd_scaling:
    output:
        parquet="results/benchmarks/dgpd_scaling.parquet",
        md="results/benchmarks/dgpd_scaling.md",
        json="results/benchmarks/dgpd_scaling.json",
        png="results/benchmarks/dgpd_scaling.png",
    log:
        "logs/benchmarks/dgpd_scaling.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 2
    resources:
        mem_mb=mem_mb(0, base=8000),
        runtime=minutes(15),
    shell:
        "python benchmarks/dgpd_scaling.py 2> {log}"


# PDBFW (benchmarks/README.md, "PDBFW"): ours against copt on the l1-ball problems of the
# paper's data, and Table 1 measured (time per iteration as d and s vary, synthetic data).
rule benchmark_pdbfw_peers:
    output:
        parquet="results/benchmarks/pdbfw_peers.parquet",
        md="results/benchmarks/pdbfw_peers.md",
        json="results/benchmarks/pdbfw_peers.json",
    log:
        "logs/benchmarks/pdbfw_peers.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 2
    resources:
        mem_mb=mem_mb(0, base=8000),
        runtime=minutes(180),
    shell:
        "python benchmarks/pdbfw_peers.py 2> {log}"


rule benchmark_pdbfw_table1:
    output:
        parquet="results/benchmarks/pdbfw_table1.parquet",
        md="results/benchmarks/pdbfw_table1.md",
        json="results/benchmarks/pdbfw_table1.json",
    log:
        "logs/benchmarks/pdbfw_table1.log",
    conda:
        "../envs/pdsparse.yaml"
    threads: 2
    resources:
        mem_mb=mem_mb(0, base=4000),
        runtime=minutes(30),
    shell:
        "python benchmarks/pdbfw_table1.py 2> {log}"
