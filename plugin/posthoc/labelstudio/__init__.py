"""The adapter to Label Studio 1.23: it talks to Label Studio and knows nothing of studies.

Paper 000 (seeds/000), section 2.1 and Figure 2: annotators verify, edit or remove pre-filled entity
links in an unmodified open-source Label Studio. This package holds the one HTTP client
(:mod:`~posthoc.labelstudio.client`, its JSON API calls in :mod:`~posthoc.labelstudio.calls`), the reading of
Label Studio's JSON (:mod:`~posthoc.labelstudio.records`, the one region parser :mod:`~posthoc.labelstudio.regions`,
label configs :mod:`~posthoc.labelstudio.label_config`, predictions and results
:mod:`~posthoc.labelstudio.payloads`), task data (:mod:`~posthoc.labelstudio.tasks`) and the Data Manager tab
(:mod:`~posthoc.labelstudio.views`), a local server's lifecycle (:mod:`~posthoc.labelstudio.server`; what it is
started with: :mod:`~posthoc.labelstudio.environment`, :mod:`~posthoc.labelstudio.credentials`,
:mod:`~posthoc.labelstudio.ports`, :mod:`~posthoc.labelstudio.database`; :mod:`~posthoc.labelstudio.server_log`,
:mod:`~posthoc.labelstudio.capacity`, :mod:`~posthoc.labelstudio.url`; served for production under gunicorn
with N workers:
:mod:`~posthoc.labelstudio.app_server`), accounts over HTTP
(:mod:`~posthoc.labelstudio.users`), the ML backend connection (:mod:`~posthoc.labelstudio.backend`) and the
access gateway's parts that know Label Studio's URLs (:mod:`~posthoc.labelstudio.gateway_rules`, the pure
decision; :mod:`~posthoc.labelstudio.gateway_body`, what a worker's annotation body may set;
:mod:`~posthoc.labelstudio.gateway_cookie`, one reading of the Cookie header;
:mod:`~posthoc.labelstudio.gateway_lookup`, session and object look-ups;
:mod:`~posthoc.labelstudio.gateway_nginx`, nginx's configuration and process). Study setup, simulated
annotators, ``ls start --gateway``'s keeper and the gateway's processes are jobs (:mod:`posthoc.jobs`).
"""
