import sys, time, torch, numpy as np
sys.path.insert(0, "/tmp/oldgp")
torch.set_num_threads(1)
import gp_old
import hpoflow.surrogates.gp as gp_new
from hpoflow.surrogates.configs import GPConfig
from hpoflow.tasks.synthetic import make_hartmann6, make_styblinski_tang, make_branin
import gpytorch
def nmll(gp):
    m = gp.model; m.train(); mll = gpytorch.mlls.ExactMarginalLogLikelihood(m.likelihood, m)
    with torch.no_grad(), gpytorch.settings.fast_computations(False, False, False):
        v = float(-mll(m(gp.X), gp.z))
    m.eval(); return v
def count(mod):
    orig = mod.minimize; box = {"n": 0}
    def f(fun, x0, **kw):
        r = orig(fun, x0, **kw); box["n"] += r.nfev; return r
    mod.minimize = f; return box
cold = {"old": count(gp_old), "new": count(gp_new)}
for name, task in (("branin", make_branin()), ("hartmann6", make_hartmann6()), ("st20", make_styblinski_tang(dim=20))):
    d = task.space.dim
    for seed in range(3):
        g = torch.Generator().manual_seed(seed)
        X = torch.rand(200, d, generator=g, dtype=torch.float64)
        y = torch.tensor([task.evaluate(task.space.decode(x), round=1).value for x in X], dtype=torch.float64)
        row = []
        for lab, mod in (("old", gp_old), ("new", gp_new)):
            gp = mod.ExactGP(d, GPConfig()); cold[lab]["n"] = 0; t = time.perf_counter()
            for n in (20, 40, 60, 100, 150, 200):   # a fit sequence with warm starts, incl. a prior-mode restart
                gp.fit(X[:n], y[:n])
            row.append(f"{lab}: nfev={cold[lab]['n']:4d} final nmll={nmll(gp):.4f} t={time.perf_counter()-t:.1f}s")
        print(name, seed, " | ".join(row), flush=True)
