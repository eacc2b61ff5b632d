"""The python3 workload of scripts/bench: `python3 python_churn.py ROUNDS`.

Dict and list churn: each round builds a dict of 2,000 small lists, strings and
tuples, filters it, sorts part of it and keeps a little, so most objects die
young and some live on. Run with PYTHONMALLOC=malloc so that every object goes
through malloc, where the profilers can see it. Deterministic.
"""

import sys


def one_round(round_index, kept):
    table = {}
    for i in range(2000):
        table[f"key-{i}-{round_index}"] = [i, str(i * round_index), (i, round_index), {"n": i}]
    survivors = [value for value in table.values() if value[0] % 3]
    survivors.sort(key=lambda value: value[1])
    kept.append(survivors[:20])
    if len(kept) > 200:
        del kept[0]
    return len(survivors)


def main():
    rounds = int(sys.argv[1])
    kept = []
    total = sum(one_round(r, kept) for r in range(rounds))
    print(f"python_churn: {rounds} rounds, {total} survivors")


if __name__ == "__main__":
    main()
