"""rbd_ros: an ament_python package that also installs with pip (``pip install -e .[test]``)."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "rbd_ros"

ROS_RUNTIME = [f"ros-jazzy-{name}" for name in (
    "rclpy", "rmw-fastrtps-cpp", "sensor-msgs", "std-msgs", "nav-msgs", "diagnostic-msgs",
    "trajectory-msgs", "geometry-msgs", "std-srvs", "rosidl-default-runtime")]
COLCON = ["colcon-core", "colcon-ros", "colcon-cmake", "colcon-python-setup-py",
          "colcon-package-selection", "colcon-output", "colcon-library-path",
          "colcon-recursive-crawl"]
ROS_BUILD = COLCON + [f"ros-jazzy-{name}" for name in (
    "ament-package", "ament-cmake", "ament-cmake-core", "ament-cmake-ros",
    "ament-cmake-include-directories", "ament-cmake-libraries", "ament-cmake-gmock",
    "ament-cmake-gtest", "ament-cmake-pytest", "gmock-vendor", "gtest-vendor",
    "python-cmake-module", "fastrtps-cmake-module", "rosidl-default-generators",
    "rosidl-core-generators", "rosidl-generator-c", "rosidl-generator-cpp",
    "rosidl-generator-py", "rosidl-generator-type-description", "rosidl-typesupport-c",
    "rosidl-typesupport-cpp", "rosidl-typesupport-fastrtps-c", "rosidl-typesupport-fastrtps-cpp",
    "rosidl-typesupport-introspection-c", "rosidl-typesupport-introspection-cpp",
    "rosidl-adapter", "rosidl-cli", "rosidl-cmake", "rosidl-parser", "rosidl-pycommon")]

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Real-time rigid-body dynamics (RNEA, CRBA, ABA) for ROS 2, compiled with numba",
    license="BSD-3-Clause",
    license_files=["LICENSE"],
    python_requires=">=3.10",
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),
    py_modules=["rbd_ros_entry"],
    package_data={PACKAGE: ["robots/*.urdf", "replay/msg/*.msg"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        ("share/" + PACKAGE + "/robots", glob("rbd_ros/robots/*.urdf")),
        ("share/" + PACKAGE + "/launch", glob("launch/*.py")),
        ("share/" + PACKAGE + "/config", glob("config/*.yaml") + glob("config/*.xml")),
    ],
    # SciPy: numba's np.dot calls BLAS through SciPy's bindings (the Eq. 24 products)
    # URDFs are read with the standard library (rbd_ros/description/urdf_reader.py)
    install_requires=["numpy>=1.24", "numba>=0.59", "scipy>=1.10",
                      # rbd_replay: rosbag2 in and out without ROS, plots
                      "rosbags>=0.10", "matplotlib", "pyyaml",
                      # rbd_replay over many bags: Dask's LocalCluster or an existing cluster
                      "dask>=2024.1", "distributed>=2024.1",
                      # rbd_ros.retime: TOPP-RA, time-optimal timing under torque limits
                      "toppra>=0.6.10,<0.7",
                      # the physically consistent identification: pseudo-inertia LMIs
                      "cvxpy>=1.4", "clarabel>=0.6",
                      # one BLAS thread where numba's threads and BLAS calls alternate
                      "threadpoolctl>=3"],
    extras_require={
        # ROS 2 Jazzy from PyPI (no ROS install needed): the client library and messages the
        # node uses, plus what scripts/build_interfaces.py needs to build rbd_ros_interfaces
        # (colcon, ament_cmake, the rosidl generators)
        "ros": ROS_RUNTIME + ROS_BUILD,
        # Pinocchio and its robot set are test oracles only, never a runtime dependency;
        # flake8 and pydocstyle run in test/test_flake8.py and test/test_pep257.py;
        # icub-models and rtb-data: robot descriptions of the URDF corpus (test/corpus.py);
        # urdf-parser-py: the URDF reader's oracle and a load_model input (never imported)
        "test": ["pytest>=7", "pin>=3", "example-robot-data>=4", "flake8", "pydocstyle",
                 "hypothesis>=6", "icub-models>=3", "rtb-data>=2",
                 "urdf-parser-py>=0.0.4",
                 # rbd_sim, the robot of the effort command's tests
                 "mujoco>=3.2"],
        # the manual (doc/, ./dev.sh docs, test/test_docs.py): Sphinx, MyST for the Markdown
        # pages, the furo theme; matplotlib draws the benchmarks page's chart
        "doc": ["sphinx>=7.2", "myst-parser>=2", "furo>=2024.1", "matplotlib"],
        "bench": ["pin>=3", "example-robot-data>=4", "matplotlib"],
        # rbd_sim: MuJoCo steps the robot of a URDF (never a dependency of the node)
        "sim": ["mujoco>=3.2"],
        # the other dynamics libraries of bench/bench_peers.py (large: not in ./dev.sh setup)
        "peers": ["pin>=3", "example-robot-data>=4", "matplotlib", "idyntree", "mujoco>=3.2",
                  "drake", "adam-robotics"],
    },
    zip_safe=False,
    maintainer="rbd_ros developers",
    maintainer_email="rbd_ros@example.com",
    tests_require=["pytest"],
    entry_points={"console_scripts": [
        # outside the package: it installs the Ctrl-C handler before rbd_ros is imported
        "dynamics_node = rbd_ros_entry:dynamics_node",
        "rbd_replay = rbd_ros.replay.cli:main",
        "joint_trajectory_source = rbd_ros.tools.trajectory_source:main",
        "rbd_demo = rbd_ros.tools.demo:main",
        "rbd_warm_cache = rbd_ros.tools.warm_cache:main",
        "rbd_retime = rbd_ros.tools.retime:main",
        "rbd_excite = rbd_ros.tools.excite:main",
        "rbd_sim = rbd_ros.tools.sim:main",
    ]},
)
