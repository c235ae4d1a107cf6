"""The README's commands and paths are real, and the docs speak to readers outside the team.

Cheap checks only (nothing is run): every ``moveorder VERB ...`` of the README, in a code block or an
inline code span, parses with the command line's own parser (a real verb and real options); every
file the README names or links exists; every ``snakemake --configfile X`` and ``bash X`` names a file
of the repository. Then: README, docs/, config/, src/ and bench/ carry no words of how the work was
organised (issue numbers, the GPU "leases", work "sessions").
"""

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from moveorder import cli

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Folders a run, the set-up or a build (dist/) makes, and the mirror beside a checkout: not in a fresh clone.
MADE = ("results/", "data/", "runs/", "logs/", ".venv/", "tools/", "dist/", "../", "$")
#: Top-level folders of the repository: an inline code span starting with one is a path.
TOP = ("config/", "docs/", "src/", "scripts/", "bench/", "tests/", "workflow/", "envs/", ".ci/")


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _code_blocks(text: str) -> list:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M)


def _commands(text: str) -> list:
    """Each command of the README's code blocks: comments dropped, ``&&`` chains split."""
    out = []
    for block in _code_blocks(text):
        for line in block.splitlines():
            line = re.sub(r"(^|\s)#.*$", "", line).strip()
            out += [c.strip() for c in line.split("&&") if c.strip()]
    return out


def _inline_spans(text: str) -> list:
    outside = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", outside)


def _moveorder_commands() -> list:
    spans = [c for c in _commands(_readme()) if c.startswith("moveorder ")]
    return spans + [s for s in _inline_spans(_readme()) if s.startswith("moveorder ")]


def test_the_readme_is_short():
    assert len(_readme().splitlines()) <= 150


def test_the_readme_names_moveorder_commands():
    commands = _moveorder_commands()
    assert len(commands) >= 5
    assert any(c.startswith("moveorder infer ") for c in commands)


@pytest.mark.parametrize("command", _moveorder_commands())
def test_every_moveorder_command_of_the_readme_parses(command):
    words = shlex.split(command)[1:]
    assert words and words[0] in cli.VERBS, f"{command!r}: no verb {words[:1]} (verbs: {sorted(cli.VERBS)})"
    if len(words) == 1:
        return  # the verb alone, named in a sentence
    parser = cli.build_parser()
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            parser.parse_args(words)
        except SystemExit as exit:
            assert exit.code == 0, f"{command!r} does not parse: {err.getvalue().strip()}"


def test_a_command_with_an_unknown_option_would_fail_this_check():
    parser = cli.build_parser()
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit) as exit:
        parser.parse_args(["infer", "position.sgf", "--no-such-option"])
    assert exit.value.code != 0


def _repo_path(word: str) -> bool:
    return "/" in word and not word.startswith(("-", "http", *MADE)) and "{" not in word and "=" not in word


def _named_paths() -> set:
    """Paths of the repository the README names: in commands, inline code, links and images."""
    text = _readme()
    named = set()
    for command in _commands(text):
        words = shlex.split(command)
        for i, w in enumerate(words):
            if w in ("--configfile", "--workflow-profile") and i + 1 < len(words):
                named.add(words[i + 1])
            elif _repo_path(w):
                named.add(w)
        if words[0] == "bash":
            named.add(words[1])
    for span in _inline_spans(text):
        for w in span.split():
            if w.startswith(TOP) and "{" not in w and not w.startswith(MADE):
                named.add(w.rstrip(".,:;"))
    for target in re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'src="([^"]+)"', text):
        if not target.startswith(("http", "#")):
            named.add(target.split("#")[0])
    return named


def test_every_path_the_readme_names_exists():
    named = _named_paths()
    assert "scripts/setup.sh" in named and "scripts/test.sh" in named and "docs/figures/opening.svg" in named
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert not missing, f"the README names paths that do not exist: {missing}"


def test_every_configuration_the_readme_runs_exists():
    configs = [
        w[i + 1]
        for c in _commands(_readme())
        for w in [shlex.split(c)]
        if w[0] == "snakemake"
        for i in range(len(w) - 1)
        if w[i] == "--configfile"
    ]
    assert "config/quick.yaml" in configs
    for config in configs:
        assert (ROOT / config).is_file(), config
    table = re.findall(r"^\| `(config/[\w.-]+\.yaml)`", _readme(), flags=re.M)
    assert len(table) >= 8
    for config in table:
        assert (ROOT / config).is_file(), config


def test_the_one_position_default_points_to_its_measurement():
    assert "docs/results.md#the-one-position-tool" in _readme()
    assert re.search(r"^## The one-position tool$", (ROOT / "docs/results.md").read_text(), flags=re.M)


#: Words of how the work was organised: issue and pull-request numbers, the GPU "leases", the team's work
#: "sessions" and "tasks", and the tool that lent the GPU. Each pattern names what it catches.
TEAM_WORDS = {
    "an issue number": r"\bissues?\s*#?\d+\b",
    "a pull-request or issue reference": r"(?<![\w&#/])\(?#\d{1,4}\)?(?![\w-])",
    "a GPU lease": r"\bleas(e|es|ed)\b",
    "a work session": r"\bsessions?\b",
    "a lent machine": r"\b(lent|not_drawn|can_start_another|device tool)\b",
    "a team's task": r"\b(this|a later|another|that|the previous|a third|a fourth|a second|each) task\b",
}
#: The text files a reader meets: README, docs, configuration, the package's sources and data, benchmarks.
READ = ("README.md", "docs", "config", "src", "bench")
SUFFIXES = {".md", ".py", ".yaml", ".yml", ".json", ".csv", ".sh", ".txt", ".smk"}


def _read_files() -> list:
    files = []
    for entry in READ:
        path = ROOT / entry
        files += [path] if path.is_file() else [p for p in sorted(path.rglob("*")) if p.suffix in SUFFIXES]
    return [f for f in files if "__pycache__" not in f.parts]


def test_the_patterns_catch_what_they_name():
    caught = {
        "an issue number": ["see issue 12", "issue #25", "Issues 24"],
        "a pull-request or issue reference": ["fixed (#12)", "as in #7."],
        "a GPU lease": ["a second GPU lease", "leased"],
        "a work session": ["this session", "sessions"],
        "a lent machine": ["no GPU was lent", "the device tool's status"],
        "a team's task": ["a later task", "this task"],
    }
    passed = ["the inference task's input", "colour #2166ac", "#000000", "[glossary](#glossary)", "release"]
    for name, texts in caught.items():
        for text in texts:
            assert re.search(TEAM_WORDS[name], text, flags=re.I), (name, text)
    for text in passed:
        assert not any(re.search(p, text, flags=re.I) for p in TEAM_WORDS.values()), text


def test_no_words_of_how_the_work_was_organised():
    files = _read_files()
    assert len(files) > 50
    found = []
    for f in files:
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for name, pattern in TEAM_WORDS.items():
                m = re.search(pattern, line, flags=re.I)
                if m:
                    found.append(f"{f.relative_to(ROOT)}:{n}: {name}: {m.group(0)!r}")
    assert not found, "\n".join(found)


def _anchors(markdown: str) -> set:
    """GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces to hyphens."""
    heads = re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in heads}


def test_every_link_of_the_readme_and_docs_resolves_with_its_anchor():
    broken = []
    for doc in [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "config/README.md", ROOT / "bench/README.md"]:
        text = doc.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text(encoding="utf-8")):
                broken.append(f"{doc.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
