-- The sqlite3 workload of scripts/bench: @rows rows into an in-memory table,
-- two indexes, grouping, an update and a delete. Run as
--   sqlite3 -batch :memory: -cmd '.parameter set @rows 200000' '.read bench/sqlite_rows.sql'
-- Deterministic: no random(), so every run makes the same allocations.
CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL, note TEXT);

WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @rows)
INSERT INTO item
SELECT i, printf('item-%08d-%x', i, (i * 2654435761) % 4294967296), i % 997, (i * 37 % 1000) / 10.0,
       substr('lorem ipsum dolor sit amet consectetur adipiscing elit', 1 + i % 20, 10 + i % 30)
FROM n;

CREATE INDEX item_name ON item(name);
CREATE INDEX item_grp ON item(grp, price);

SELECT grp, count(*), round(sum(price), 1) FROM item GROUP BY grp ORDER BY 3 DESC, 1 LIMIT 3;
SELECT count(DISTINCT substr(name, 6, 5)), count(DISTINCT note) FROM item;
SELECT group_concat(name, ',') IS NOT NULL FROM (SELECT name FROM item ORDER BY note, name DESC LIMIT 50000);

UPDATE item SET price = price * 1.1, note = upper(note) WHERE grp % 2 = 0;
DELETE FROM item WHERE id % 3 = 0;
SELECT count(*), round(avg(price), 3) FROM item;
