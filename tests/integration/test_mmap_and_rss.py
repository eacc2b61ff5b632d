"""Anonymous memory mappings and RSS samples."""


def test_anonymous_mappings_are_counted_exactly(record, run_plain, only_dump):
    # given mmap_prog: 4 anonymous mmaps (1 MiB, 64 KiB, 256 KiB, 128 KiB), an
    # mremap (256 -> 512 KiB), 5 munmaps (one of a file mapping, one of a hole
    # in the middle of the 128 KiB mapping); only the 64 KiB stays mapped
    # when it runs under the preload
    run = record("mmap_prog")
    plain = run_plain("mmap_prog")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (0, "mmap_prog: 64 KiB left mapped\n")
    dump = only_dump(run)
    # then every call is counted, and only 64 KiB of anonymous memory is live
    counts = dump["counts"]
    assert (counts["mmap"], counts["munmap"], counts["mremap"]) == (4, 5, 1)
    assert (dump["mmap"]["live_bytes"], dump["mmap"]["live_count"]) == (64 * 1024, 1)


def test_rss_is_sampled_at_the_requested_interval(record, only_dump):
    # given rss_grow, which holds 64 MiB of touched heap for 400 ms
    # when it runs with MEMREC_RSS_INTERVAL_MS=20
    run = record("rss_grow", env={"MEMREC_RSS_INTERVAL_MS": "20"})
    assert run.returncode == 0, run.describe()
    dump = only_dump(run)
    # then there are many samples, and the largest saw the 64 MiB
    assert dump["rss"]["samples"] >= 10
    assert dump["counts"]["rss_samples"] == dump["rss"]["samples"]
    assert dump["rss"]["max_bytes"] >= 64 * 1024 * 1024
    assert dump["heap"]["peak_bytes"] >= 64 * 1024 * 1024
