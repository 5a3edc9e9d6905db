# Compares the best plan with upstream-compatible greedy for each model in a folder.
import json, os, sys
d = sys.argv[1]
for name in sorted({f.split('.')[0] for f in os.listdir(d) if f.endswith('.best.json')}, key=lambda n: [
        "simple_conv", "basic", "basic_dynamic", "simple_conv_quantized", "lowerable_sin", "foo",
        "model_addmul", "m_linear_clamp"].index(n)):
    best = json.load(open(os.path.join(d, name + '.best.json')))
    greedy = json.load(open(os.path.join(d, name + '.greedy.json')))
    b = sum(sum(p["buffer_sizes"]) for p in best["memory_plans"].values())
    g = sum(sum(p["buffer_sizes"]) for p in greedy["memory_plans"].values())
    lb = sum(sum(p["lower_bounds"]) for p in best["memory_plans"].values())
    # best never loses to upstream's greedy, never beats the lower bound, and stays within 5% of it.
    ok = lb <= b <= g and b <= 1.05 * lb
    print(name, "ok" if ok else "FAIL best=%d greedy=%d lower=%d" % (b, g, lb))
