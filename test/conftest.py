import os
import random
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# DDS isolation for every ROS test of this session (and the processes they start)
os.environ["ROS_DOMAIN_ID"] = str(random.SystemRandom().randint(1, 100))
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
