"""Scope-jail attacks: every escape is refused, the secret outside is never read or touched."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from relavium_lsp.errors import ToolDenied, ToolError
from relavium_lsp.tools.jail import ScopeRoots, open_in_scope, resolve_in_scope

SECRET = "TOPSECRET-outside-the-workspace"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A workspace full of traps, a secret outside it and a second workspace beside it."""
    workspace = tmp_path / "ws"
    outside = tmp_path / "outside"
    second = tmp_path / "ws2"
    prefix_twin = tmp_path / "ws-evil"
    temp_dir = tmp_path / "server-tmp"
    for directory in (workspace, outside, second, prefix_twin, temp_dir):
        directory.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (second / "other.txt").write_text(SECRET)
    (prefix_twin / "x.txt").write_text(SECRET)
    (workspace / "ok.txt").write_text("fine\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner.txt").write_text("inner\n")
    (temp_dir / "scratch.txt").write_text("scratch\n")
    links = {
        "link_out": outside / "secret.txt",
        "dir_link": outside,
        "rel_link": Path("../outside/secret.txt"),
        "ws_link": second,
        "chain1": workspace / "chain2",
        "chain2": outside / "secret.txt",
        "loop_a": workspace / "loop_b",
        "loop_b": workspace / "loop_a",
        "dangling_out": outside / "created-by-attack.txt",
        "devlink": Path("/dev/zero"),
        "proclink": Path("/proc/self/environ"),
        "root_link": Path("/"),
        "inner_link": workspace / "ok.txt",
    }
    for name, target in links.items():
        (workspace / name).symlink_to(target)
    (workspace / "sub" / "deep_link").symlink_to(Path("../../outside"))
    os.mkfifo(workspace / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(workspace / "sock"))
    server.close()
    return {
        "workspace": workspace,
        "outside": outside,
        "second": second,
        "twin": prefix_twin,
        "temp": temp_dir,
    }


def roots_for(layout: dict[str, Path], tier: str = "sandboxed", **kwargs: object) -> ScopeRoots:
    return ScopeRoots.build(layout["workspace"], tier, layout["temp"], **kwargs)  # type: ignore[arg-type]


# Each entry is either a literal path or a template using {outside}, {ws}, {second}, {twin}.
DENIED_READS = [
    # .. chains
    "../outside/secret.txt",
    "../../etc/passwd",
    "../" * 30 + "etc/passwd",
    "sub/../../outside/secret.txt",
    "./../outside/secret.txt",
    "sub/./../../outside/secret.txt",
    "ok.txt/../../outside/secret.txt",
    "..",
    "../",
    "../ws2/other.txt",
    # absolute paths
    "/etc/passwd",
    "/etc/shadow",
    "/",
    "/tmp",
    "//etc/passwd",
    "/./etc/passwd",
    "{outside}/secret.txt",
    "{ws}/../outside/secret.txt",
    # other workspaces and prefix twins
    "{second}/other.txt",
    "{twin}/x.txt",
    "{ws}-evil/x.txt",
    # symlinks pointing out
    "link_out",
    "dir_link",
    "dir_link/secret.txt",
    "rel_link",
    "ws_link/other.txt",
    "chain1",
    "sub/deep_link/secret.txt",
    "root_link/etc/passwd",
    # symlink loops
    "loop_a",
    "loop_b/anything",
    # home
    "~",
    "~/.ssh/id_rsa",
    "~root/.bashrc",
    # pseudo filesystems and devices
    "/proc/self/environ",
    "/proc/self/mem",
    "/proc/self/cwd/ok.txt",
    "/proc/self/root/etc/passwd",
    "/proc/1/environ",
    "/sys/kernel/notes",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "devlink",
    "proclink",
    "pipe",
    "sock",
    # NUL, control, invisible and bidi characters
    "ok.txt\x00.png",
    "ok\n.txt",
    "ok\r.txt",
    "\u202etxt.ko",
    "ok\u200b.txt",
    # unicode look-alikes of . and /
    "\uff0e\uff0e/outside/secret.txt",
    "\u2025/outside/secret.txt",
    "..\u2215outside\u2215secret.txt",
    "..\uff0foutside/secret.txt",
    "\u2024\u2024/outside/secret.txt",
    # length
    "a/" * 3000,
]


def _expand(template: str, layout: dict[str, Path]) -> str:
    return template.format(
        outside=layout["outside"],
        ws=layout["workspace"],
        second=layout["second"],
        twin=layout["twin"],
    )


@pytest.mark.parametrize("raw", DENIED_READS)
def test_read_paths_are_refused_in_sandboxed(layout: dict[str, Path], raw: str) -> None:
    with pytest.raises(ToolDenied):
        resolve_in_scope(_expand(raw, layout), roots_for(layout), must_exist=True, for_write=False)


DENIED_WRITES = [
    "../outside/new.txt",
    "dangling_out",
    "dir_link/new.txt",
    "link_out",
    "{outside}/new.txt",
    "{second}/new.txt",
    ".git/hooks/pre-commit",
    ".git/config",
    "sub/.GIT/hooks/post-commit",
    "pipe",
    "/dev/shm/owned",
    "~/.bashrc",
]


@pytest.mark.parametrize("raw", DENIED_WRITES)
def test_write_paths_are_refused_in_sandboxed(layout: dict[str, Path], raw: str) -> None:
    with pytest.raises(ToolDenied):
        resolve_in_scope(_expand(raw, layout), roots_for(layout), must_exist=False, for_write=True)
    assert not (layout["outside"] / "new.txt").exists()
    assert not (layout["outside"] / "created-by-attack.txt").exists()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ok.txt", "ws/ok.txt"),
        ("./sub/../ok.txt", "ws/ok.txt"),
        ("sub/inner.txt", "ws/sub/inner.txt"),
        ("inner_link", "ws/ok.txt"),
        ("{ws}/ok.txt", "ws/ok.txt"),
    ],
)
def test_paths_inside_resolve(layout: dict[str, Path], raw: str, expected: str) -> None:
    resolved = resolve_in_scope(
        _expand(raw, layout), roots_for(layout), must_exist=True, for_write=False
    )
    assert resolved == layout["workspace"].parent / expected


def test_server_temp_dir_is_a_root(layout: dict[str, Path]) -> None:
    resolved = resolve_in_scope(
        str(layout["temp"] / "scratch.txt"), roots_for(layout), must_exist=True, for_write=False
    )
    assert resolved.read_text() == "scratch\n"


def test_new_file_in_scope_resolves_for_write(layout: dict[str, Path]) -> None:
    resolved = resolve_in_scope(
        "sub/new/deeper.txt", roots_for(layout), must_exist=False, for_write=True
    )
    assert resolved == layout["workspace"] / "sub" / "new" / "deeper.txt"


def test_missing_file_is_a_failure_not_a_denial(layout: dict[str, Path]) -> None:
    with pytest.raises(ToolError) as raised:
        resolve_in_scope("nope.txt", roots_for(layout), must_exist=True, for_write=False)
    assert not isinstance(raised.value, ToolDenied)


def test_project_tier_adds_allowed_paths_only(layout: dict[str, Path]) -> None:
    roots = roots_for(layout, "project", allowed_paths=["../outside"])
    resolved = resolve_in_scope("../outside/secret.txt", roots, must_exist=True, for_write=False)
    assert resolved == layout["outside"] / "secret.txt"
    with pytest.raises(ToolDenied):
        resolve_in_scope(
            str(layout["second"] / "other.txt"), roots, must_exist=True, for_write=False
        )


def test_full_tier_reaches_anything_but_pseudo_files_and_devices(layout: dict[str, Path]) -> None:
    roots = roots_for(layout, "full")
    assert (
        resolve_in_scope(
            str(layout["second"] / "other.txt"), roots, must_exist=True, for_write=False
        )
        == layout["second"] / "other.txt"
    )
    for raw in ("/proc/self/environ", "/dev/zero", "devlink", "pipe", "sock"):
        with pytest.raises(ToolDenied):
            resolve_in_scope(raw, roots, must_exist=True, for_write=False)


def test_private_state_directory_is_refused_even_inside_the_workspace(
    layout: dict[str, Path],
) -> None:
    private = layout["workspace"] / "relavium-home"
    private.mkdir()
    (private / "history.key").write_text("key material")
    roots = ScopeRoots.build(layout["workspace"], "full", layout["temp"], forbidden=[private])
    with pytest.raises(ToolDenied):
        resolve_in_scope("relavium-home/history.key", roots, must_exist=True, for_write=False)


def test_symlink_swapped_in_after_the_check_is_refused_on_open(layout: dict[str, Path]) -> None:
    roots = roots_for(layout)
    target = layout["workspace"] / "swap.txt"
    target.write_text("harmless")
    resolved = resolve_in_scope("swap.txt", roots, must_exist=True, for_write=False)
    target.unlink()
    target.symlink_to(layout["outside"] / "secret.txt")
    with pytest.raises(ToolDenied):
        open_in_scope(resolved, roots)


def test_directory_swapped_for_a_symlink_after_the_check_is_refused(
    layout: dict[str, Path],
) -> None:
    roots = roots_for(layout)
    (layout["workspace"] / "box").mkdir()
    (layout["workspace"] / "box" / "secret.txt").write_text("harmless")
    resolved = resolve_in_scope("box/secret.txt", roots, must_exist=True, for_write=False)
    (layout["workspace"] / "box" / "secret.txt").unlink()
    (layout["workspace"] / "box").rmdir()
    (layout["workspace"] / "box").symlink_to(layout["outside"])
    with pytest.raises(ToolDenied):
        open_in_scope(resolved, roots)


def test_fifo_swapped_in_after_the_check_is_refused_without_blocking(
    layout: dict[str, Path],
) -> None:
    roots = roots_for(layout)
    target = layout["workspace"] / "late.txt"
    target.write_text("x")
    resolved = resolve_in_scope("late.txt", roots, must_exist=True, for_write=False)
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(ToolDenied):
        open_in_scope(resolved, roots)


def test_open_in_scope_reads_a_checked_file(layout: dict[str, Path]) -> None:
    roots = roots_for(layout)
    resolved = resolve_in_scope("ok.txt", roots, must_exist=True, for_write=False)
    descriptor = open_in_scope(resolved, roots)
    with os.fdopen(descriptor, "rb") as handle:
        assert handle.read() == b"fine\n"


def test_there_are_at_least_fifty_path_attacks() -> None:
    assert len(DENIED_READS) + len(DENIED_WRITES) >= 50
