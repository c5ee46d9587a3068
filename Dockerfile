# One image for every Turnstream service: docker-compose.yml runs the secured `broker`, `topics`,
# `topology`, `tool-executor` and `gateway` from it. Build: docker build -t turnstream .
FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY .mvn .mvn
COPY mvnw pom.xml ./
COPY schemas schemas
COPY connectors connectors
COPY topology topology
COPY turnstream-model turnstream-model
COPY turnstream-runtime turnstream-runtime
COPY turnstream-broker turnstream-broker
COPY turnstream-test-support turnstream-test-support
COPY turnstream-topology turnstream-topology
COPY turnstream-topology-service turnstream-topology-service
COPY turnstream-testkit turnstream-testkit
COPY turnstream-tool-executor turnstream-tool-executor
COPY turnstream-gateway turnstream-gateway
COPY turnstream-connect turnstream-connect
COPY turnstream-dist turnstream-dist
# the distribution and the modules it is built from (their tests compile, for the test-jars, but do not run;
# the services' own jars are not needed: this image runs every service from the distribution)
RUN ./mvnw -B -q -DskipTests package -Dturnstream.service-jars.skip=true -pl turnstream-dist -am

FROM eclipse-temurin:17-jre
# /var/lib/turnstream and the credentials directories below it are the mount points of docker-compose's
# volumes: a new volume takes its mount point's owner and mode, so the non-root user can write them and
# nobody else can read the credentials
RUN useradd --system --uid 10001 --no-create-home turnstream \
    && mkdir -p /var/lib/turnstream/kafka/credentials /workspace \
       /var/lib/turnstream/credentials-for/admin /var/lib/turnstream/credentials-for/gateway \
       /var/lib/turnstream/credentials-for/topology /var/lib/turnstream/credentials-for/tool-executor \
    && chown -R turnstream /var/lib/turnstream /workspace \
    && chmod 700 /var/lib/turnstream/kafka/credentials /var/lib/turnstream/credentials-for/*
COPY --from=build /src/turnstream-dist/target/turnstream.jar /app/turnstream.jar
USER turnstream
# gateway HTTP API and web view; topology /health; the broker (docker-compose publishes no broker port)
EXPOSE 8080 8081 9092
# JAVA_OPTS passes JVM flags (heap, remote JMX), as with the ./turnstream launcher
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS -jar /app/turnstream.jar \"$@\"", "turnstream"]
CMD ["--help"]
