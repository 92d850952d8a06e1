"""The planner: what a plan will cost and how wide its intervals will be, before (or during) the study.

Estimates of hours, cost and half-widths (:mod:`~posthoc.study.planner.estimate`, kept where
:mod:`posthoc.study.plan.estimate_file` says) from assumed rates (:mod:`~.rates`) and the plan's counts
(:mod:`~.counts`); their exact analytic form (:mod:`~.analytic`) and replicates (:mod:`~.replicates` over
:mod:`~.shape`, paper 000 section 4's bootstrap intervals); simulated judgements (:mod:`~.simulate`); the smallest
plan for a target (:mod:`~.target`); how far the predictions can be trusted (:mod:`~.validity`), and whether extending
a study at its pilot biases the rates (:mod:`~.adaptive`); during a study, the half-widths reached and still to come
(:mod:`~.progress_widths`); and the report's plan-against-outcome section (:mod:`~.outcome_section`). Reads the plan
(:mod:`posthoc.study.plan`); nothing of the plan reads it.
"""
