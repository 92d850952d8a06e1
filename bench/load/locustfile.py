"""Locust scenario: a study's annotators at work in Label Studio's labeling stream (run by ``bench/load_bench.py``).

Each Locust user is one worker of the study (its login and project from ``LOAD_USERS``, a JSON list the bench
writes). It logs in through the login form (as the browser does: CSRF cookie, session), then until its project
has no task left: opens its next task (``GET /api/projects/{id}/next``, the stream's request), takes
``regions x LOAD_SECONDS_PER_MENTION x LOAD_TIME_SCALE`` seconds to decide the task's pre-filled mentions (the
study estimate's prior, 15 s a region, paper 000 section 2.1; the paper's pace by default, ``LOAD_TIME_SCALE`` < 1
makes annotators faster), saves a draft halfway on ``LOAD_DRAFT_SHARE`` of its tasks (``POST
/api/tasks/{id}/drafts``, the editor's autosave), and submits (``POST /api/tasks/{id}/annotations/?project={id}``,
with the draft's id when there is one). Decisions are drawn with the prior's shares
verify / edit / remove 0.893 / 0.088 / 0.019.

The shape (:class:`StepRamp`) holds ``LOAD_STEPS`` concurrent users (``20,100,300``) for ``LOAD_STEP_SECONDS``
each. Every request is also written to ``LOAD_SAMPLES`` (JSON lines: seconds since start, name, milliseconds,
ok, users) so the bench takes percentiles per step; every Submit Label Studio accepted goes to ``LOAD_SUBMITS``
(task id, annotation id, login) so the bench counts them against the export, and every Submit *sent* goes to
``LOAD_SENT`` (task id, login) before it leaves: a Submit Locust cuts off when it stops (its users get
``--stop-timeout`` to finish a task, and a task takes minutes at the paper's pace) may still be stored, and the
bench tells those apart from annotations nobody sent. Nothing here reads the study's tables: only what Label
Studio answers.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import threading
import time
from typing import Any

from locust import HttpUser, LoadTestShape, between, events, task
from locust.exception import StopUser

USERS: list[dict[str, Any]] = json.loads(open(os.environ["LOAD_USERS"], encoding="utf-8").read())  # noqa: SIM115
SECONDS_PER_MENTION = float(os.environ.get("LOAD_SECONDS_PER_MENTION", "15"))
TIME_SCALE = float(os.environ.get("LOAD_TIME_SCALE", "1"))
DRAFT_SHARE = float(os.environ.get("LOAD_DRAFT_SHARE", "0.3"))
STEPS = [int(n) for n in os.environ.get("LOAD_STEPS", "20,100,300").split(",")]
STEP_SECONDS = float(os.environ.get("LOAD_STEP_SECONDS", "120"))
SPAWN_SECONDS = float(os.environ.get("LOAD_SPAWN_SECONDS", "30"))
SHARES = (("verify", 0.893), ("edit", 0.088), ("remove", 0.019))
_next_account = itertools.count()
_lock = threading.Lock()
_started = time.monotonic()
_samples = open(os.environ["LOAD_SAMPLES"], "a", encoding="utf-8")  # noqa: SIM115 - closed at quit
_submits = open(os.environ["LOAD_SUBMITS"], "a", encoding="utf-8")  # noqa: SIM115 - closed at quit
_sent = open(os.environ["LOAD_SENT"], "a", encoding="utf-8")  # noqa: SIM115 - closed at quit


_environment: list[Any] = []


@events.init.add_listener
def _keep_environment(environment: Any, **kwargs: Any) -> None:
    _environment.append(environment)


@events.request.add_listener
def _record(request_type: str, name: str, response_time: float, exception: Exception | None,
            **kwargs: Any) -> None:
    runner = _environment[0].runner if _environment else None
    users = runner.user_count if runner is not None else 0
    line = json.dumps([round(time.monotonic() - _started, 3), name, round(response_time, 2), exception is None, users])
    with _lock:
        _samples.write(line + "\n")


@events.quitting.add_listener
def _close(**kwargs: Any) -> None:
    _samples.close()
    _submits.close()
    _sent.close()


def _decide(prediction: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The annotator's result: every pre-filled region with a decision drawn from the prior's shares."""
    names, weights = zip(*SHARES, strict=True)
    result = []
    for item in prediction:
        if item.get("type") == "labels":
            decision = random.choices(names, weights)[0]
            result.append({**item, "origin": "prediction-changed",
                           "value": {**item["value"], "labels": [decision]}})
        else:
            result.append(item)
    return result


class Annotator(HttpUser):
    """One study worker in the labeling stream (module docstring)."""

    wait_time = between(0, 0)

    def on_start(self) -> None:
        number = next(_next_account)
        if number >= len(USERS):
            raise StopUser()
        self.account = USERS[number]
        self.client.get("/user/login/", name="login form")
        csrf = self.client.cookies.get("csrftoken", "")
        with self.client.post("/user/login/", name="login", allow_redirects=False, catch_response=True,
                              data={"csrfmiddlewaretoken": csrf, "email": self.account["email"],
                                    "password": self.account["password"]},
                              headers={"Referer": f"{self.host}/user/login/"}) as answer:
            if answer.status_code != 302:
                answer.failure(f"login refused: HTTP {answer.status_code}")
                raise StopUser()
        self.client.headers["X-CSRFToken"] = self.client.cookies.get("csrftoken", "")

    @task
    def annotate_next_task(self) -> None:
        project = self.account["project"]
        with self.client.get(f"/api/projects/{project}/next", name="next task", catch_response=True) as answer:
            if answer.status_code == 404:  # the worker's batch is done
                answer.success()
                raise StopUser()
            if answer.status_code != 200:
                answer.failure(f"HTTP {answer.status_code}")
                time.sleep(1.0)  # as a person would before trying again, not a tight loop
                return
            found = answer.json()
        predictions = found.get("predictions") or [{"result": []}]
        result = _decide(predictions[0].get("result") or [])
        regions = sum(1 for item in result if item.get("type") == "labels") or 1
        think = regions * SECONDS_PER_MENTION * TIME_SCALE * random.uniform(0.5, 1.5)
        draft_id = None
        if random.random() < DRAFT_SHARE:
            time.sleep(think / 2)
            with self.client.post(f"/api/tasks/{found['id']}/drafts", name="draft", catch_response=True,
                                  json={"result": result[: len(result) // 2], "lead_time": think / 2}) as answer:
                if answer.status_code == 201:
                    draft_id = answer.json().get("id")
                else:
                    answer.failure(f"HTTP {answer.status_code}")
            time.sleep(think / 2)
        else:
            time.sleep(think)
        body: dict[str, Any] = {"result": result, "lead_time": think, "was_cancelled": False}
        if draft_id is not None:
            body["draft_id"] = draft_id
        with _lock:
            _sent.write(json.dumps([found["id"], self.account["email"]]) + "\n")
            _sent.flush()
        with self.client.post(f"/api/tasks/{found['id']}/annotations/?project={project}", name="submit",
                              json=body, catch_response=True) as answer:
            if answer.status_code != 201:
                answer.failure(f"HTTP {answer.status_code}: {answer.text[:200]}")
                return
            line = json.dumps([found["id"], answer.json()["id"], self.account["email"]])
        with _lock:
            _submits.write(line + "\n")
            _submits.flush()


class StepRamp(LoadTestShape):
    """``LOAD_STEPS`` users, each step held ``LOAD_STEP_SECONDS`` (spawned over ``LOAD_SPAWN_SECONDS``)."""

    def tick(self) -> tuple[int, float] | None:
        step = int(self.get_run_time() // STEP_SECONDS)
        if step >= len(STEPS):
            return None
        previous = STEPS[step - 1] if step else 0
        return STEPS[step], max(1.0, (STEPS[step] - previous) / SPAWN_SECONDS)
