"""Label Studio's database settings (SQLite / a named PostgreSQL / a local cluster), and the free-port check."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from posthoc.errors import PosthocInputError
from posthoc.labelstudio.credentials import resolve_credentials
from posthoc.labelstudio.database import (
    DatabaseSettings,
    choose_database,
    read_database,
    settings_from_dsn,
    settings_from_environment,
    write_database,
)
from posthoc.labelstudio.environment import server_environment
from posthoc.labelstudio.ports import port_is_free


def test_a_dsn_gives_every_part_with_percent_escapes_undone() -> None:
    settings = settings_from_dsn("postgresql://ls%40lab:p%2Fw%20rd@db.example.org:6543/label%20studio")
    assert (settings.engine, settings.user, settings.password, settings.host, settings.port, settings.name) == (
        "postgresql", "ls@lab", "p/w rd", "db.example.org", 6543, "label studio")
    assert settings_from_dsn("postgres://u@h/n").port == 5432


@pytest.mark.parametrize("dsn, part", [
    ("mysql://u:p@h/n", "scheme"),
    ("postgresql://u:p@h:notaport/n", "port"),
    ("postgresql://u:p@h", "database name"),
    ("postgresql://:p@h/n", "user"),
])
def test_a_bad_dsn_is_one_line_naming_the_part(dsn: str, part: str) -> None:
    with pytest.raises(PosthocInputError, match=part):
        settings_from_dsn(dsn)


def test_label_studios_own_variables_name_a_server() -> None:
    env = {"POSTGRE_HOST": "pg", "POSTGRE_PORT": "5433", "POSTGRE_USER": "ls", "POSTGRE_PASSWORD": "x",
           "POSTGRE_NAME": "studio"}
    settings = settings_from_environment(env)
    assert settings == DatabaseSettings("postgresql", host="pg", port=5433, name="studio", user="ls", password="x")
    assert settings_from_environment({}) is None
    with pytest.raises(PosthocInputError, match="POSTGRE_PORT"):
        settings_from_environment({"POSTGRE_HOST": "pg", "POSTGRE_PORT": "five"})


def test_the_password_is_never_in_repr_or_describe() -> None:
    settings = DatabaseSettings("postgresql", host="h", port=1, name="n", user="u", password="s3cret-pw")
    assert "s3cret-pw" not in repr(settings) + settings.describe()


def test_applied_settings_replace_every_stray_database_variable(tmp_path: Path) -> None:
    base = {"DJANGO_DB": "mysql", "LABEL_STUDIO_DJANGO_DB": "mysql", "POSTGRE_HOST": "elsewhere",
            "LABEL_STUDIO_POSTGRE_NAME": "other", "PATH": "/usr/bin"}
    credentials = resolve_credentials(tmp_path, environ={})
    sqlite_env = server_environment(tmp_path, credentials, base=base)
    assert not {"DJANGO_DB", "LABEL_STUDIO_DJANGO_DB", "POSTGRE_HOST", "LABEL_STUDIO_POSTGRE_NAME"} & set(sqlite_env)
    postgres = DatabaseSettings("postgresql", host="127.0.0.1", port=5544, name="ls", user="u", password="p")
    write_database(tmp_path, postgres)
    assert oct((tmp_path / "database.json").stat().st_mode & 0o777) == "0o600"
    env = server_environment(tmp_path, credentials, base=base)  # the stored settings are the default
    assert (env["DJANGO_DB"], env["POSTGRE_HOST"], env["POSTGRE_PORT"], env["POSTGRE_NAME"]) == (
        "postgresql", "127.0.0.1", "5544", "ls")
    assert "LABEL_STUDIO_DJANGO_DB" not in env and "LABEL_STUDIO_POSTGRE_NAME" not in env
    assert read_database(tmp_path) == postgres


def test_a_data_dir_keeps_its_database(tmp_path: Path) -> None:
    sqlite_dir = tmp_path / "sqlite"
    sqlite_dir.mkdir()
    (sqlite_dir / "label_studio.sqlite3").write_bytes(b"")
    local = DatabaseSettings("postgresql", local_cluster=True)
    with pytest.raises(PosthocInputError, match="already holds a SQLite Label Studio"):
        choose_database(sqlite_dir, local)
    fresh = choose_database(tmp_path / "fresh", local)
    assert fresh.local_cluster and fresh.password and fresh.user and fresh.name
    assert choose_database(tmp_path / "fresh", None).engine == "sqlite"  # nothing stored yet
    pg_dir = tmp_path / "pg"
    pg_dir.mkdir()
    write_database(pg_dir, fresh)
    assert choose_database(pg_dir, None) == fresh
    assert choose_database(pg_dir, local) == fresh  # the stored password is kept
    with pytest.raises(PosthocInputError, match="runs on PostgreSQL"):
        choose_database(pg_dir, DatabaseSettings())
    with pytest.raises(PosthocInputError, match="not on"):
        choose_database(pg_dir, DatabaseSettings("postgresql", host="other", port=5432, name="x", user="u"))


def test_a_corrupt_database_file_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "database.json").write_text(json.dumps({"engine": "oracle"}))
    with pytest.raises(PosthocInputError, match=r"database\.json"):
        read_database(tmp_path)
    (tmp_path / "database.json").write_text("{not json")
    with pytest.raises(PosthocInputError, match=r"database\.json"):
        read_database(tmp_path)


def test_a_port_held_only_by_time_wait_sockets_is_free_and_a_listener_is_not() -> None:
    """A crashed server leaves TIME-WAIT sockets on its port for about a minute; Label Studio binds with
    SO_REUSEADDR, so the port is usable and the check must say so (it refused for a minute before)."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = listener.accept()
    assert not port_is_free(port)  # a listener: taken
    accepted.close()  # the server side closes first: its end of the connection goes to TIME-WAIT
    time.sleep(0.2)
    client.close()
    listener.close()
    time.sleep(0.2)
    states = Path("/proc/net/tcp").read_text() if Path("/proc/net/tcp").exists() else ""
    if f":{port:04X} " in states:
        assert any(f":{port:04X} " in line and line.split()[3] == "06" for line in states.splitlines()), (
            "expected a TIME-WAIT socket on the port for this test to mean anything")
    plain = socket.socket()
    try:
        plain.bind(("127.0.0.1", port))
        plain_binds = True
    except OSError:
        plain_binds = False
    finally:
        plain.close()
    assert not plain_binds, "without SO_REUSEADDR the port is refused: the situation the check must survive"
    assert port_is_free(port)

