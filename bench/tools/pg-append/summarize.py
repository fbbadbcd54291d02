# python3 summarize.py run-final.txt : median (and all runs) per variant of bench.ts JSON lines
import sys, json, statistics as st, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    if l.startswith('{'):
        r = json.loads(l); d[r['variant']].append(r)
print(f"| variant | backend µs/row (median) | runs | cluster µs/row | WAL B/row | rows/s |")
print("|---|---|---|---|---|---|")
for k, v in d.items():
    b = [x['backendUsPerRow'] for x in v]; c = [x['clusterUsPerRow'] for x in v]
    print(f"| {k} | {st.median(b):.1f} | {', '.join(map(str, b))} | {st.median(c):.1f} | {st.median([x['walBytesPerRow'] for x in v]):.0f} | {st.median([x['rowsPerSec'] for x in v]):.0f} |")
