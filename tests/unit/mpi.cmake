# The MPI services in one process not started by mpirun (src/mpi/tbbt-mpi.h): inactive,
# rank 0 of 1, collectives complete at once.  Built against whichever implementation
# the build chose (mpi-open.c or mpi-none.c); the multi-rank path is bench/mpi-smoke's.
tbbt_unit_test(test-mpi tbbt_mpi)
