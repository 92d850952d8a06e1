"""Eaglet's gold-standard error flags (paper 003) and their review in Label Studio.

Paper 003 (Jha et al., "All that glitters is not gold", ESWC 2017) defines rules for NER/EL gold
standards (Sect. 3.2), a taxonomy of errors (Sect. 3.4) and Eaglet, a pipeline of independent
modules that flags them (Sect. 4.3), a completion module (Sect. 4.2) and a review module (Sect. 4.4).

- :mod:`posthoc.eaglet.rules`: one module per error type (long description, positioning,
  overlapping, combined marking, URI errors, inconsistent marking, missing entities);
- :mod:`posthoc.eaglet.pipeline`: the explicit, ordered, configurable pipeline ->
  a flags table (:mod:`posthoc.eaglet.flags`);
- :mod:`posthoc.eaglet.kb`: knowledge-base snapshots (DBpedia redirects / disambiguations, TSV) and
  an optional online MediaWiki checker behind the same interface;
- :mod:`posthoc.eaglet.nif_out`, :mod:`posthoc.eaglet.report`: NIF with the flags, a report section
  in the form of the paper's Table 1;
- :mod:`posthoc.eaglet.review`: flags -> Label Studio review tasks -> corrected gold + change log;
- :mod:`posthoc.eaglet.words`, :mod:`posthoc.eaglet.places`: what the rules share: words as Rule 2 defines
  them, and the states and countries of combined marking's evidence.
"""
