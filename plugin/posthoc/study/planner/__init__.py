"""The planner: what a plan will cost and how wide its intervals will be, before (or during) the study.

Estimates of hours, cost and half-widths (:mod:`~posthoc.study.planner.estimate`), their exact analytic
form and replicates (paper 000 section 4's bootstrap intervals), the smallest plan for a target, and how far
the predictions can be trusted. Reads the plan (:mod:`posthoc.study.plan`); nothing of the plan reads it.
"""
