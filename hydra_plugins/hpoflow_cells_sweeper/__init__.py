"""hpoflow's Hydra sweeper for studies whose grid is not one cartesian product (see ``cells_sweeper``)."""
