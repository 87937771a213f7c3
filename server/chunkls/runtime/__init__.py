"""Process plumbing, below everything else: early answers, the garbage collector and exit
(``gc_budget``), memory given back, outputs whose reader has gone."""
