"""The load test's parts: the Locust scenario, the nginx in front of two app servers, the per-step report."""
