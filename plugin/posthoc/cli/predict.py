"""``posthoc predict``: run an entity linker over a corpus into one system's mentions file.

The predictors and the job live in ``posthoc.predictors`` (registry, run); docs/backend.md
explains each and how to run REL or a GERBIL-compatible annotator beside the backend.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from posthoc.cli.predictor_options import predictor_options
from posthoc.errors import PosthocInputError
from posthoc.predictors.registry import PredictorSpec


@click.command("predict", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("corpus", type=click.Path(path_type=Path))
@click.option("--out", "out_path", required=True, type=click.Path(path_type=Path),
              help="The system's mentions file to write (JSONL, the format `posthoc study plan` reads).")
@click.option("--system", default=None,
              help="The system name written on every line [default: the predictor's name, or the class name].")
@click.option("--format", "fmt", default=None,
              help="The corpus format (jsonl, nif, wned, aida) [default: from the file].")
@click.option("--dataset", default=None, help="The dataset name when the corpus file carries none.")
@predictor_options("predict", required=True)
@click.option("--label-config", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="A model class: the Label Studio config it is built with [default: entity_verification.xml].")
@click.option("--batch-size", type=click.IntRange(1, 10000), default=8, show_default=True,
              help="Documents given to the predictor at once (and written at once).")
@click.option("--progress/--no-progress", default=True, show_default=True, help="Show a progress bar.")
def predict_command(corpus: Path, predictor: PredictorSpec, out_path: Path, system: str | None, fmt: str | None,
                    dataset: str | None, label_config: Path | None, batch_size: int, progress: bool) -> None:
    """Run an entity linker over CORPUS and write its mentions as one system.

    CORPUS is any corpus the readers know (JSONL, NIF, WNED, AIDA TSV). The output has one line a
    document with code point offsets and canonical links; add it to a study config as one more
    [[inputs]] table (path, system) and it is judged blind like the other systems.

    The run can be resumed: documents are saved to OUT.partial as they are done, so running the
    same command again after a stop skips them; OUT appears when every document is done. When a
    service answers something that is not its protocol, the run stops with one line naming the
    document (exit code 3).
    """
    from posthoc.labelstudio.payloads import MODEL_VERSION
    from posthoc.predictors.registry import ModelFactory
    from posthoc.predictors.run import model_linker, predict_corpus, text_linker
    from posthoc.readers import read_mentions

    spec = predictor
    for path in (*spec.alias_files, *(p for p in (spec.source, label_config) if p is not None)):
        if not Path(path).exists():
            raise PosthocInputError(f"{path}: no such file")
    spec.check()
    documents = read_mentions(corpus, fmt=fmt, dataset=dataset, progress=progress)
    name = spec.display_name
    built: object = None
    if spec.is_class:
        from posthoc.paths import label_config as default_config

        config = label_config.read_text(encoding="utf-8") if label_config else default_config("entity_verification")
        model = ModelFactory(spec, model_version=MODEL_VERSION).model(config)
        linker = model_linker(model, config, name=name)
    else:
        made = dataclasses.replace(spec, _documents=documents.documents).linker()
        assert made is not None
        built, linker = made, text_linker(made)
    stream = getattr(built, "link_stream", None)  # spaCy: one nlp.pipe over the corpus
    summary = predict_corpus(documents, linker, out_path, system=system or name, name=name, batch_size=batch_size,
                             progress=progress, stream=stream)
    if summary.predicted == 0:
        click.echo(f"{out_path}: already holds all {summary.documents} documents (nothing to do)", err=True)
    else:
        rate = summary.predicted / summary.seconds if summary.seconds > 0 else float("inf")
        click.echo(f"{out_path}: {summary.predicted} documents predicted by {name} ({summary.mentions} mentions, "
                   f"{rate:.1f} documents/s), {summary.skipped} already done; system {system or name!r}", err=True)
    missing = int(getattr(built, "missing", 0) or 0)
    if missing:
        click.echo(f"note: {missing} documents are not in --source {spec.source} (written without mentions)", err=True)
