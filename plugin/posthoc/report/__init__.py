"""The study report (paper 000's Figures 3-6 and its tables) and its figures, drawn deterministically from Scores.

The HTML shell every report shares (escaping, safe links, embedded figures) is on the ground floor
(:mod:`posthoc.html`); the sections that combine several papers' analyses are composed by the score job
(:mod:`posthoc.jobs.study_sections`).
"""
