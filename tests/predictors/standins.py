"""Stand-in linking services for the tests: loopback HTTP servers that speak the published protocols.

They are stand-ins, not the real services (REL needs GBs of Wikipedia embeddings, GERBIL annotators their
own KBs): each links by exact alias look-up in the text and answers in the service's wire format.

* :class:`StandInREL` follows REL's HTTP API (github.com/informagi/REL: README "Querying our API" and
  ``REL/server.py``): ``POST`` JSON ``{"text", "spans": []}`` -> a JSON list of
  ``[start, length, mention, entity, ED confidence, MD score, tag]``, offsets in code points (Python),
  entity titles with underscores, NIL left out, ``[]`` for an empty text; it also records each text it got.
  Its ``do_POST`` is REL's (``REL/server.py`` at informagi/REL 0a479bc: ``do_POST`` lines 55-77, the 200 at
  64-65, the error at 72-76; ``read_json``'s rewriting at line 88): ``send_response(200)`` and
  ``end_headers()`` before anything is read (HTTP/1.0,
  no Content-Length: the body ends at close), ``read_json`` does ``text = text.replace("&amp;", "&")``, and
  an exception while linking is answered *inside that 200's body* by ``send_response(400)``,
  ``end_headers()`` and ``[]`` (so the body starts ``HTTP/1.0 400 Bad Request``); ``mode="error"`` (or a
  text holding ``poison`` with ``poison_error=True``) raises there. Its aliases are matched in the rewritten
  text, with ``&amp;`` in them rewritten the same way, as REL's mention detection sees them.
* :class:`StandInNIF` follows the NIF web-service protocol as GERBIL calls it (github.com/dice-group/gerbil,
  ``NIFBasedAnnotatorWebservice``; NIF 2.0 Core): ``POST`` Turtle (``application/x-turtle``) with one
  ``nif:Context`` -> the same document plus one ``nif:Phrase`` a mention (``nif:anchorOf``,
  ``nif:beginIndex``, ``nif:endIndex``, ``nif:referenceContext``, ``itsrdf:taIdentRef``). ``utf16=True``
  makes it count offsets in UTF-16 code units, as a Java annotator writing ``String`` indices itself does
  (GERBIL's NIF library, ``AnnotationWriter.addSpan``, would convert them with ``codePointCount``);
  ``anchors=False`` leaves ``nif:anchorOf`` out (it is optional in NIF 2.0 Core, and annotators omit it).

``mode`` changes what they answer, to test the clients: ``ok``, ``empty`` (no mentions), ``malformed``
(not the protocol), ``wrong-offsets`` (offsets that do not match the mention), ``slow`` (sleeps
``delay`` seconds first), ``5xx`` (always 503), ``flaky`` (503 for the first ``failures`` requests); and
``poison``: a text holding that string is answered malformed whatever the mode.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rdflib import Graph, Namespace, URIRef

from posthoc.eaglet.nif_out import _add_phrase as add_phrase  # the project's NIF phrase triples

NIF = Namespace("http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#")


def find_aliases(text: str, aliases: dict[str, str]) -> list[tuple[int, int, str, str]]:
    """Every occurrence of every alias in ``text``: ``(start, end, surface, title)`` (code points), leftmost-longest."""
    found: list[tuple[int, int, str, str]] = []
    taken = [False] * len(text)
    for surface in sorted(aliases, key=len, reverse=True):
        start = text.find(surface)
        while start >= 0:
            end = start + len(surface)
            if not any(taken[start:end]):
                found.append((start, end, surface, aliases[surface]))
                for i in range(start, end):
                    taken[i] = True
            start = text.find(surface, start + 1)
    return sorted(found)


def utf16_offset(text: str, index: int) -> int:
    """The UTF-16 code unit offset of code point ``index`` of ``text`` (what Java's String.length() counts)."""
    return len(text[:index].encode("utf-16-le")) // 2


class _StandIn:
    def __init__(self, aliases: dict[str, str], *, mode: str = "ok", delay: float = 0.0, failures: int = 0,
                 poison: str | None = None) -> None:
        self.aliases = aliases
        self.poison = poison
        self.mode = mode
        self.delay = delay
        self.failures = failures
        self.requests = 0
        self.texts: list[str] = []
        self.lock = threading.Lock()
        self.url = ""

    def answer(self, body: bytes, content_type: str) -> tuple[int, str, bytes]:
        raise NotImplementedError

    def respond(self, handler: BaseHTTPRequestHandler, body: bytes) -> bool:
        """Answer the request on ``handler`` itself (True), or leave it to :meth:`handle` (False)."""
        return False

    def handle(self, body: bytes, content_type: str) -> tuple[int, str, bytes]:
        with self.lock:
            self.requests += 1
            number = self.requests
        if self.mode == "slow":
            time.sleep(self.delay)
        if self.mode == "5xx" or (self.mode == "flaky" and number <= self.failures):
            return 503, "text/plain", b"Service Unavailable (stand-in)"
        return self.answer(body, content_type)

    @contextmanager
    def serve(self) -> Iterator[_StandIn]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if outer.respond(self, body):
                    return
                try:
                    status, kind, payload = outer.handle(body, self.headers.get("Content-Type", ""))
                except (BrokenPipeError, ConnectionResetError):
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_port}/"
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
            thread.join(timeout=10)


class StandInREL(_StandIn):
    """REL's HTTP API (see the module docstring)."""

    def __init__(self, aliases: dict[str, str], *, poison_error: bool = False, **options: Any) -> None:
        super().__init__(aliases, **options)
        self.poison_error = poison_error
        #: the aliases as REL's mention detection meets them: in the text after read_json's rewriting
        self.rewritten = {surface.replace("&amp;", "&"): title for surface, title in aliases.items()}

    def respond(self, handler: BaseHTTPRequestHandler, body: bytes) -> bool:
        """REL/server.py's ``do_POST``, for the modes REL itself has (ok, empty, error, an &amp; rewrite)."""
        if self.mode not in ("ok", "empty", "error", "wrong-offsets"):
            return False
        if self.poison and not self.poison_error and self.poison in body.decode("utf-8", "replace"):
            return False  # the stand-in's malformed answer (answer())
        with self.lock:
            self.requests += 1
        try:
            handler.send_response(200)  # REL: 200 before the text is even read
            handler.end_headers()
            data = json.loads(body.decode("utf-8"))
            original = data["text"]
            text = original.replace("&amp;", "&")  # REL/server.py read_json
            with self.lock:
                self.texts.append(original)
            if self.mode == "error" or (self.poison_error and self.poison and self.poison in text):
                raise RuntimeError("linking failed (stand-in)")
            handler.wfile.write(json.dumps(self._rows(text, self.rewritten)).encode("utf-8"))  # REL: json.dumps, ASCII
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception:  # REL: print(...), then a 400 status line and [] written into the 200's body
            handler.send_response(400)
            handler.end_headers()
            handler.wfile.write(json.dumps([]).encode("utf-8"))
        return True

    def _rows(self, text: str, aliases: dict[str, str]) -> list[list[Any]]:
        if self.mode == "empty" or not text:
            return []
        rows = []
        for start, end, surface, title in find_aliases(text, aliases):
            if self.mode == "wrong-offsets":
                start += 1
            rows.append([start, end - start, surface, title, 0.87, 0.99, "PER"])
        return rows

    def answer(self, body: bytes, content_type: str) -> tuple[int, str, bytes]:
        """The stand-in's own modes (malformed, poison; after slow / 5xx / flaky): the text as sent is linked,
        as a REL without read_json's rewriting would."""
        try:
            data = json.loads(body.decode("utf-8"))
            text = data["text"]
        except (ValueError, KeyError, TypeError):
            return 400, "application/json", b"[]"
        with self.lock:
            self.texts.append(text)
        if self.mode == "malformed" or (self.poison and self.poison in text):
            return 200, "application/json", b'{"annotations": "not rel"'
        return 200, "application/json", json.dumps(self._rows(text, self.aliases)).encode("utf-8")


class StandInNIF(_StandIn):
    """A NIF web-service annotator as GERBIL calls one (see the module docstring)."""

    def __init__(self, aliases: dict[str, str], *, utf16: bool = False, anchors: bool = True,
                 **options: Any) -> None:
        super().__init__(aliases, **options)
        self.utf16 = utf16
        self.anchors = anchors
        self.content_types: list[str] = []

    def answer(self, body: bytes, content_type: str) -> tuple[int, str, bytes]:
        with self.lock:
            self.content_types.append(content_type)
        graph = Graph()
        try:
            graph.parse(data=body.decode("utf-8"), format="turtle")
        except Exception:
            return 400, "text/plain", b"not NIF"
        texts = [str(graph.value(c, NIF.isString)) for c in graph.subjects(NIF.isString, None)]
        if self.mode == "malformed" or (self.poison and any(self.poison in t for t in texts)):
            return 200, "application/x-turtle", b"@prefix nif: <broken . this is not turtle"
        for context in list(graph.subjects(NIF.isString, None)):
            text = str(graph.value(context, NIF.isString))
            with self.lock:
                self.texts.append(text)
            if self.mode == "empty":
                continue
            base = str(context).split("#", 1)[0]
            for start, end, surface, title in find_aliases(text, self.aliases):
                begin, finish = (utf16_offset(text, start), utf16_offset(text, end)) if self.utf16 else (start, end)
                if self.mode == "wrong-offsets":
                    begin, finish = begin + 1, finish + 1
                phrase = URIRef(f"{base}#char={begin},{finish}")
                add_phrase(graph, phrase, context, begin, finish, surface,  # type: ignore[arg-type]
                           f"http://dbpedia.org/resource/{title}")
                if not self.anchors:
                    graph.remove((phrase, NIF.anchorOf, None))
        return 200, "application/x-turtle", graph.serialize(format="turtle", encoding="utf-8")
