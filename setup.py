"""rbd_ros: an ament_python package that also installs with pip (``pip install -e .[test]``)."""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "rbd_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    description="Real-time rigid-body dynamics (RNEA, CRBA, ABA) for ROS 2, compiled with numba",
    license="BSD-3-Clause",
    python_requires=">=3.10",
    packages=find_packages(include=[PACKAGE, PACKAGE + ".*"]),
    package_data={PACKAGE: ["robots/*.urdf"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        ("share/" + PACKAGE + "/robots", glob("rbd_ros/robots/*.urdf")),
    ],
    # SciPy: numba's np.dot calls BLAS through SciPy's bindings (the Eq. 24 products)
    install_requires=["numpy>=1.24", "numba>=0.59", "scipy>=1.10", "urdf-parser-py>=0.0.4"],
    extras_require={
        # the ROS 2 Jazzy client libraries as wheels from PyPI (no ROS install needed)
        "ros": ["ros-jazzy-rclpy", "ros-jazzy-rmw-fastrtps-cpp", "ros-jazzy-sensor-msgs",
                "ros-jazzy-std-msgs", "ros-jazzy-nav-msgs", "ros-jazzy-diagnostic-msgs"],
        # Pinocchio and its robot set are test oracles only, never a runtime dependency
        "test": ["pytest>=7", "pin>=3", "example-robot-data>=4"],
        "bench": ["pin>=3", "example-robot-data>=4", "matplotlib"],
    },
    zip_safe=False,
    maintainer="rbd_ros developers",
    maintainer_email="rbd_ros@example.com",
    tests_require=["pytest"],
    entry_points={"console_scripts": []},
)
