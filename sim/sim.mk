# sim/: the discrete-event engine. Knows nothing of models/.
SIM_OBJS := \
	$(BUILD)/sim/err.o \
	$(BUILD)/sim/alloc.o \
	$(BUILD)/sim/time.o \
	$(BUILD)/sim/pq.o \
	$(BUILD)/sim/engine.o \
	$(BUILD)/sim/rng.o
# statistics and resources (stats, station)
SIM_OBJS += $(BUILD)/sim/stats.o $(BUILD)/sim/station.o
# flow-level bandwidth sharing
SIM_OBJS += $(BUILD)/sim/flow.o

LIB_OBJS += $(SIM_OBJS)
UNIT_TESTS += err alloc time pq engine rng
UNIT_TESTS += stats station
UNIT_TESTS += flow
