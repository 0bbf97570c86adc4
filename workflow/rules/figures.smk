# figures: aggregates -> results/figures/faceoff/figure{1,2,3}.{png,pdf}
# Figure 1: one aggregate per panel (a, b: Theorem 3 worst cases; c: news20.binary; d: leu);
# panels without data are drawn as "skipped". Figure 2: the Theorem 9 grid. Figure 3:
# R(alpha, d, n), computed from the formulas alone.
# The captions workflow/report/figure{1,2}.rst are Jinja templates that list the curves from
# faceoff.solvers, so they cannot drift from the config. Figure 2 shares one y-range across
# cells (pdsparse.plotting.faceoff_figure2, sharey=True).


rule figure1:
    input:
        unpack(
            lambda wc: {
                f"panel_{k}": aggregate_file(p["experiment"]) for k, p in PLAN.panels.items()
            }
        ),
    output:
        png=report(f"{FIGURES}/figure1.png", caption="../report/figure1.rst", category="Face-Off"),
        pdf=f"{FIGURES}/figure1.pdf",
    params:
        panels=lambda wc, input: " ".join(
            f"--panel {k.removeprefix('panel_')}={shlex.quote(v)}" for k, v in input.items()
        ),
        titles=lambda wc: " ".join(
            "--title {}".format(shlex.quote(f"{k}={p['title']}")) for k, p in PLAN.panels.items()
        ),
    log:
        "logs/figures/faceoff/figure1.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse figure faceoff1 {params.panels} {params.titles}"
        " --out-png {output.png} --out-pdf {output.pdf} 2> {log}"


rule figure2:
    input:
        aggregate_file("figure2"),
    output:
        png=report(f"{FIGURES}/figure2.png", caption="../report/figure2.rst", category="Face-Off"),
        pdf=f"{FIGURES}/figure2.pdf",
    params:
        n=" ".join(str(n) for n in FO["figure2"]["n"]),
        fractions=" ".join(repr(float(f)) for f in FO["figure2"]["nnz_fraction"]),
        sharey="--sharey" if FO["figure2"]["sharey"] else "--no-sharey",
    log:
        "logs/figures/faceoff/figure2.log",
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse figure faceoff2 --aggregate {input} --n {params.n}"
        " --nnz-fraction {params.fractions} {params.sharey}"
        " --out-png {output.png} --out-pdf {output.pdf} 2> {log}"


rule figure3:
    output:
        png=report(f"{FIGURES}/figure3.png", caption="../report/figure3.rst", category="Face-Off"),
        pdf=f"{FIGURES}/figure3.pdf",
    params:
        n=FO["figure3"]["n"],
        d_max=(
            f"--d-max {FO['figure3']['d_max']}" if FO["figure3"].get("d_max") else ""
        ),
        d_points=FO["figure3"]["d_points"],
        alpha_points=FO["figure3"]["alpha_points"],
    log:
        "logs/figures/faceoff/figure3.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    conda:
        "../envs/pdsparse.yaml"
    shell:
        "pdsparse figure faceoff3 --n {params.n} {params.d_max} --d-points {params.d_points}"
        " --alpha-points {params.alpha_points} --out-png {output.png} --out-pdf {output.pdf}"
        " 2> {log}"
