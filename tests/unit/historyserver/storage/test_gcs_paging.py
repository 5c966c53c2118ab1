"""GCS listing pages: cut here to ``limit`` entries and resumed by ``startOffset`` after the
last entry returned, whichever way the server counts ``maxResults`` (the real API counts items
and prefixes together; fake-gcs-server counts items only and repeats later prefixes)."""

from __future__ import annotations

from kuberay.historyserver.storage.gcs import _page, _parse_token, _past


def _items(*names: str) -> list[dict[str, str]]:
    return [{"name": name, "size": "1"} for name in names]


def test_a_complete_answer_is_one_page() -> None:
    page = _page({"items": _items("p/a", "p/c"), "prefixes": ["p/b/"]}, None, 10)
    assert [o.key for o in page.objects] == ["p/a", "p/c"]
    assert page.prefixes == ("p/b/",)
    assert page.next_token is None


def test_an_answer_with_more_entries_than_the_limit_is_cut() -> None:
    answer = {"items": _items("p/a", "p/c"), "prefixes": ["p/b/", "p/d/", "p/e/"]}
    page = _page(answer, None, 2)
    assert [o.key for o in page.objects] == ["p/a"]
    assert page.prefixes == ("p/b/",)
    assert page.next_token == "p:p/b/"


def test_with_more_pages_only_entries_up_to_the_last_item_are_kept() -> None:
    """fake-gcs-server's answer: items cut at maxResults, every later prefix included; the
    prefixes past the last item are listed by the next page instead."""
    answer = {
        "items": _items("p/a", "p/c"),
        "prefixes": ["p/b/", "p/x/", "p/y/"],
        "nextPageToken": "p/d",
    }
    page = _page(answer, None, 10)
    assert [o.key for o in page.objects] == ["p/a", "p/c"]
    assert page.prefixes == ("p/b/",)
    assert page.next_token == "o:p/c"


def test_resuming_after_an_object_drops_it() -> None:
    page = _page({"items": _items("p/c", "p/d")}, ("o", "p/c"), 10)
    assert [o.key for o in page.objects] == ["p/d"]


def test_a_page_of_prefixes_only_with_more_to_come() -> None:
    page = _page({"prefixes": ["p/a/", "p/b/"], "nextPageToken": "t"}, None, 10)
    assert page.prefixes == ("p/a/", "p/b/")
    assert page.next_token == "p:p/b/"


def test_dir_markers_are_dropped_but_still_advance_the_token() -> None:
    answer = {"items": [{"name": "p/", "size": "0"}], "nextPageToken": "t"}
    page = _page(answer, None, 10)
    assert page.objects == ()
    assert page.next_token == "o:p/"


def test_tokens() -> None:
    assert _past("a/b/") == "a/b0"
    assert _parse_token("o:a?b=1:c") == ("o", "a?b=1:c")
    assert _parse_token("p:a/") == ("p", "a/")
